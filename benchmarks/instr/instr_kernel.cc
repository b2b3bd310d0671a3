// critpath — benchmarks/instr/instr_kernel.cc: one Lagrange step of the instrumentation-cost
// kernel (a hydrodynamics-like sweep over nodes and elements; not a physics code).
//
// Per step: a handful of phase functions (recorded), each looping over the mesh. The force
// and kinematics phases call small helpers defined in this file per element, about 36 calls
// per element and step (gather an element's nodes, its volume and shape-function
// derivatives, face normals, the volume derivative at each corner, face areas): the density
// of the LULESH proxy app, whose element loops call its helpers as often. The viscosity and
// equation-of-state phases are written out in their loops. Everything reaches the mesh
// through its accessors (instr_mesh.h). The helpers are what the automatic filter drops and
// the suggested filter file names; the accessors are what compiling without header
// instrumentation removes.
#include <cmath>
#include <cstdint>

#include "instr_mesh.h"

namespace instr {

Mesh::Mesh(int edge)
    : edge_(edge), num_elem_(edge * edge * edge), num_node_((edge + 1) * (edge + 1) * (edge + 1)) {
  const size_t nn = size_t(num_node_), ne = size_t(num_elem_);
  for (auto* f : {&x_, &y_, &z_, &xd_, &yd_, &zd_, &xdd_, &ydd_, &zdd_, &fx_, &fy_, &fz_, &nodal_mass_})
    f->assign(nn, 0.0);
  for (auto* f : {&e_, &p_, &q_, &v_, &volo_, &delv_, &vdov_, &arealg_, &ss_, &elem_mass_, &ql_, &qq_,
                  &delv_xi_, &delv_eta_, &delv_zeta_, &delx_xi_, &delx_eta_, &delx_zeta_})
    f->assign(ne, 0.0);
  nodelist_.resize(8 * ne);
  const double h = 1.125 / edge;
  int n = 0;
  for (int k = 0; k <= edge; ++k)
    for (int j = 0; j <= edge; ++j)
      for (int i = 0; i <= edge; ++i, ++n) {
        x_[size_t(n)] = h * i;
        y_[size_t(n)] = h * j;
        z_[size_t(n)] = h * k;
      }
  const int e1 = edge + 1;
  int el = 0;
  for (int k = 0; k < edge; ++k)
    for (int j = 0; j < edge; ++j)
      for (int i = 0; i < edge; ++i, ++el) {
        int* nl = &nodelist_[size_t(8) * size_t(el)];
        const int b = i + j * e1 + k * e1 * e1;
        nl[0] = b;
        nl[1] = b + 1;
        nl[2] = b + e1 + 1;
        nl[3] = b + e1;
        nl[4] = b + e1 * e1;
        nl[5] = b + e1 * e1 + 1;
        nl[6] = b + e1 * e1 + e1 + 1;
        nl[7] = b + e1 * e1 + e1;
      }
  // A blast in the corner element, as in the Sedov problem.
  e_[0] = 3.948746e+7;
  for (size_t i = 0; i < ne; ++i) {
    v_[i] = 1.0;
    volo_[i] = h * h * h;
    elem_mass_[i] = volo_[i];
  }
  for (int e = 0; e < num_elem_; ++e)
    for (int c = 0; c < 8; ++c) nodal_mass_[size_t(nodelist_[size_t(8 * e + c)])] += volo_[size_t(e)] / 8;
}

namespace {

struct Hex {
  double x[8], y[8], z[8];
};

// The six faces of a hexahedron as corner indices, outward normals by the right-hand rule.
constexpr int kFaces[6][4] = {{0, 1, 2, 3}, {0, 4, 5, 1}, {1, 5, 6, 2},
                              {2, 6, 7, 3}, {3, 7, 4, 0}, {4, 7, 6, 5}};
// Hourglass base vectors of the flanagan-belytschko kind (one +-1 pattern per mode).
constexpr double kGamma[4][8] = {{1, 1, -1, -1, -1, -1, 1, 1},
                                 {1, -1, -1, 1, -1, 1, 1, -1},
                                 {1, -1, 1, -1, 1, -1, 1, -1},
                                 {-1, 1, -1, 1, 1, -1, 1, -1}};

void gather_nodes(Mesh& m, int e, Hex& h) {
  const int* nl = m.nodelist(e);
  for (int c = 0; c < 8; ++c) {
    h.x[c] = m.x(nl[c]);
    h.y[c] = m.y(nl[c]);
    h.z[c] = m.z(nl[c]);
  }
}

void gather_velocities(Mesh& m, int e, Hex& h) {
  const int* nl = m.nodelist(e);
  for (int c = 0; c < 8; ++c) {
    h.x[c] = m.xd(nl[c]);
    h.y[c] = m.yd(nl[c]);
    h.z[c] = m.zd(nl[c]);
  }
}

double triple(double ax, double ay, double az, double bx, double by, double bz, double cx, double cy,
              double cz) {
  return ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx);
}

double hex_volume(const Hex& h) {
  const double dx61 = h.x[6] - h.x[1], dy61 = h.y[6] - h.y[1], dz61 = h.z[6] - h.z[1];
  const double dx70 = h.x[7] - h.x[0], dy70 = h.y[7] - h.y[0], dz70 = h.z[7] - h.z[0];
  const double dx63 = h.x[6] - h.x[3], dy63 = h.y[6] - h.y[3], dz63 = h.z[6] - h.z[3];
  const double dx20 = h.x[2] - h.x[0], dy20 = h.y[2] - h.y[0], dz20 = h.z[2] - h.z[0];
  const double dx50 = h.x[5] - h.x[0], dy50 = h.y[5] - h.y[0], dz50 = h.z[5] - h.z[0];
  const double dx64 = h.x[6] - h.x[4], dy64 = h.y[6] - h.y[4], dz64 = h.z[6] - h.z[4];
  const double dx31 = h.x[3] - h.x[1], dy31 = h.y[3] - h.y[1], dz31 = h.z[3] - h.z[1];
  const double dx72 = h.x[7] - h.x[2], dy72 = h.y[7] - h.y[2], dz72 = h.z[7] - h.z[2];
  const double dx43 = h.x[4] - h.x[3], dy43 = h.y[4] - h.y[3], dz43 = h.z[4] - h.z[3];
  const double dx57 = h.x[5] - h.x[7], dy57 = h.y[5] - h.y[7], dz57 = h.z[5] - h.z[7];
  const double dx14 = h.x[1] - h.x[4], dy14 = h.y[1] - h.y[4], dz14 = h.z[1] - h.z[4];
  const double dx25 = h.x[2] - h.x[5], dy25 = h.y[2] - h.y[5], dz25 = h.z[2] - h.z[5];
  const double v = triple(dx31 + dx72, dx63, dx20, dy31 + dy72, dy63, dy20, dz31 + dz72, dz63, dz20) +
                   triple(dx43 + dx57, dx64, dx70, dy43 + dy57, dy64, dy70, dz43 + dz57, dz64, dz70) +
                   triple(dx14 + dx25, dx61, dx50, dy14 + dy25, dy61, dy50, dz14 + dz25, dz61, dz50);
  return v / 12.0;
}

// Derivatives of the trilinear shape functions at the element centre through the Jacobian of
// the isoparametric map; returns its determinant (8 x the volume for a parallelepiped).
double shape_derivatives(const Hex& h, double bx[8], double by[8], double bz[8]) {
  const double fjxxi = .125 * ((h.x[6] - h.x[0]) + (h.x[5] - h.x[3]) - (h.x[7] - h.x[1]) - (h.x[4] - h.x[2]));
  const double fjxet = .125 * ((h.x[6] - h.x[0]) - (h.x[5] - h.x[3]) + (h.x[7] - h.x[1]) - (h.x[4] - h.x[2]));
  const double fjxze = .125 * ((h.x[6] - h.x[0]) + (h.x[5] - h.x[3]) + (h.x[7] - h.x[1]) + (h.x[4] - h.x[2]));
  const double fjyxi = .125 * ((h.y[6] - h.y[0]) + (h.y[5] - h.y[3]) - (h.y[7] - h.y[1]) - (h.y[4] - h.y[2]));
  const double fjyet = .125 * ((h.y[6] - h.y[0]) - (h.y[5] - h.y[3]) + (h.y[7] - h.y[1]) - (h.y[4] - h.y[2]));
  const double fjyze = .125 * ((h.y[6] - h.y[0]) + (h.y[5] - h.y[3]) + (h.y[7] - h.y[1]) + (h.y[4] - h.y[2]));
  const double fjzxi = .125 * ((h.z[6] - h.z[0]) + (h.z[5] - h.z[3]) - (h.z[7] - h.z[1]) - (h.z[4] - h.z[2]));
  const double fjzet = .125 * ((h.z[6] - h.z[0]) - (h.z[5] - h.z[3]) + (h.z[7] - h.z[1]) - (h.z[4] - h.z[2]));
  const double fjzze = .125 * ((h.z[6] - h.z[0]) + (h.z[5] - h.z[3]) + (h.z[7] - h.z[1]) + (h.z[4] - h.z[2]));
  const double cjxxi = fjyet * fjzze - fjzet * fjyze, cjxet = -fjyxi * fjzze + fjzxi * fjyze;
  const double cjxze = fjyxi * fjzet - fjzxi * fjyet, cjyxi = -fjxet * fjzze + fjzet * fjxze;
  const double cjyet = fjxxi * fjzze - fjzxi * fjxze, cjyze = -fjxxi * fjzet + fjzxi * fjxet;
  const double cjzxi = fjxet * fjyze - fjyet * fjxze, cjzet = -fjxxi * fjyze + fjyxi * fjxze;
  const double cjzze = fjxxi * fjyet - fjyxi * fjxet;
  bx[0] = -cjxxi - cjxet - cjxze;
  bx[1] = cjxxi - cjxet - cjxze;
  bx[2] = cjxxi + cjxet - cjxze;
  bx[3] = -cjxxi + cjxet - cjxze;
  by[0] = -cjyxi - cjyet - cjyze;
  by[1] = cjyxi - cjyet - cjyze;
  by[2] = cjyxi + cjyet - cjyze;
  by[3] = -cjyxi + cjyet - cjyze;
  bz[0] = -cjzxi - cjzet - cjzze;
  bz[1] = cjzxi - cjzet - cjzze;
  bz[2] = cjzxi + cjzet - cjzze;
  bz[3] = -cjzxi + cjzet - cjzze;
  for (int c = 0; c < 4; ++c) {
    bx[c + 4] = -bx[(c + 2) % 4];
    by[c + 4] = -by[(c + 2) % 4];
    bz[c + 4] = -bz[(c + 2) % 4];
  }
  return 8. * (fjxet * cjxet + fjyet * cjyet + fjzet * cjzet);
}

// The area vector of one face (half the cross product of its diagonals), added to the
// normals of its four corners.
void face_normal(const Hex& h, const int f[4], double nx[8], double ny[8], double nz[8]) {
  const double ax = h.x[f[2]] - h.x[f[0]], ay = h.y[f[2]] - h.y[f[0]], az = h.z[f[2]] - h.z[f[0]];
  const double bx = h.x[f[3]] - h.x[f[1]], by = h.y[f[3]] - h.y[f[1]], bz = h.z[f[3]] - h.z[f[1]];
  const double cx = 0.125 * (ay * bz - az * by), cy = 0.125 * (az * bx - ax * bz),
               cz = 0.125 * (ax * by - ay * bx);
  for (int c = 0; c < 4; ++c) {
    nx[f[c]] += cx;
    ny[f[c]] += cy;
    nz[f[c]] += cz;
  }
}

void node_normals(const Hex& h, double nx[8], double ny[8], double nz[8]) {
  for (int c = 0; c < 8; ++c) nx[c] = ny[c] = nz[c] = 0.0;
  for (const auto& f : kFaces) face_normal(h, f, nx, ny, nz);
}

// d(volume)/d(corner a), from the corner's three neighbours and their opposites.
void volume_derivative(const Hex& h, int a, int b, int c, int d, int e, int f, int g, double& dvx,
                       double& dvy, double& dvz) {
  const double twelfth = 1.0 / 12.0;
  dvx = twelfth * ((h.y[b] + h.y[c]) * (h.z[a] + h.z[b]) - (h.y[a] + h.y[b]) * (h.z[b] + h.z[c]) +
                   (h.y[a] + h.y[e]) * (h.z[d] + h.z[e]) - (h.y[d] + h.y[e]) * (h.z[a] + h.z[e]) -
                   (h.y[c] + h.y[g]) * (h.z[d] + h.z[f]) + (h.y[d] + h.y[f]) * (h.z[c] + h.z[g]));
  dvy = twelfth * (-(h.x[b] + h.x[c]) * (h.z[a] + h.z[b]) + (h.x[a] + h.x[b]) * (h.z[b] + h.z[c]) -
                   (h.x[a] + h.x[e]) * (h.z[d] + h.z[e]) + (h.x[d] + h.x[e]) * (h.z[a] + h.z[e]) +
                   (h.x[c] + h.x[g]) * (h.z[d] + h.z[f]) - (h.x[d] + h.x[f]) * (h.z[c] + h.z[g]));
  dvz = twelfth * (-(h.y[b] + h.y[c]) * (h.x[a] + h.x[b]) + (h.y[a] + h.y[b]) * (h.x[b] + h.x[c]) -
                   (h.y[a] + h.y[e]) * (h.x[d] + h.x[e]) + (h.y[d] + h.y[e]) * (h.x[a] + h.x[e]) +
                   (h.y[c] + h.y[g]) * (h.x[d] + h.x[f]) - (h.y[d] + h.y[f]) * (h.x[c] + h.x[g]));
}

void volume_derivatives(const Hex& h, double dvx[8], double dvy[8], double dvz[8]) {
  static constexpr int kNeighbours[8][7] = {
      {1, 2, 3, 4, 5, 7, 0}, {0, 1, 2, 7, 4, 6, 0}, {3, 0, 1, 6, 7, 5, 0}, {2, 3, 0, 5, 6, 4, 0},
      {7, 6, 5, 0, 3, 1, 0}, {4, 7, 6, 1, 0, 2, 0}, {5, 4, 7, 2, 1, 3, 0}, {6, 5, 4, 3, 2, 0, 0}};
  for (int c = 0; c < 8; ++c) {
    const int* n = kNeighbours[c];
    volume_derivative(h, n[0], n[1], n[2], n[3], n[4], n[5], c, dvx[c], dvy[c], dvz[c]);
  }
}

// Hourglass-control force of one element from its corner velocities (four +-1 modes).
void hourglass_force(const Hex& pos, const Hex& vel, const double dvx[8], const double dvy[8],
                     const double dvz[8], double volume, double coefficient, double fx[8], double fy[8],
                     double fz[8]) {
  const double inv_vol = volume > 1e-30 ? 1.0 / volume : 0.0;
  double hx[4], hy[4], hz[4];
  for (int i = 0; i < 4; ++i) {
    double gx = 0, gy = 0, gz = 0, hgx = 0, hgy = 0, hgz = 0;
    for (int c = 0; c < 8; ++c) {
      gx += pos.x[c] * kGamma[i][c];
      gy += pos.y[c] * kGamma[i][c];
      gz += pos.z[c] * kGamma[i][c];
    }
    for (int c = 0; c < 8; ++c) {
      const double g = kGamma[i][c] - inv_vol * (dvx[c] * gx + dvy[c] * gy + dvz[c] * gz);
      hgx += vel.x[c] * g;
      hgy += vel.y[c] * g;
      hgz += vel.z[c] * g;
    }
    hx[i] = hgx, hy[i] = hgy, hz[i] = hgz;
  }
  for (int c = 0; c < 8; ++c) {
    double sx = 0, sy = 0, sz = 0;
    for (int i = 0; i < 4; ++i) {
      sx += kGamma[i][c] * hx[i];
      sy += kGamma[i][c] * hy[i];
      sz += kGamma[i][c] * hz[i];
    }
    fx[c] = coefficient * sx;
    fy[c] = coefficient * sy;
    fz[c] = coefficient * sz;
  }
}

double area_face(const Hex& h, const int f[4]) {
  const double fx = (h.x[f[2]] - h.x[f[0]]) - (h.x[f[3]] - h.x[f[1]]);
  const double fy = (h.y[f[2]] - h.y[f[0]]) - (h.y[f[3]] - h.y[f[1]]);
  const double fz = (h.z[f[2]] - h.z[f[0]]) - (h.z[f[3]] - h.z[f[1]]);
  const double gx = (h.x[f[2]] - h.x[f[0]]) + (h.x[f[3]] - h.x[f[1]]);
  const double gy = (h.y[f[2]] - h.y[f[0]]) + (h.y[f[3]] - h.y[f[1]]);
  const double gz = (h.z[f[2]] - h.z[f[0]]) + (h.z[f[3]] - h.z[f[1]]);
  const double fg = fx * gx + fy * gy + fz * gz;
  return (fx * fx + fy * fy + fz * fz) * (gx * gx + gy * gy + gz * gz) - fg * fg;
}

double characteristic_length(const Hex& h, double volume) {
  double a = 0;
  for (const auto& f : kFaces) a = std::fmax(a, area_face(h, f));
  return a > 0 ? 4.0 * volume / std::sqrt(a) : 0.0;
}

// The divergence of the velocity at the element centre (trace of the velocity gradient).
double velocity_divergence(const Hex& vel, const double bx[8], const double by[8], const double bz[8],
                           double detj) {
  if (!(detj > 0)) return 0.0;
  double dxx = 0, dyy = 0, dzz = 0;
  for (int c = 0; c < 8; ++c) {
    dxx += bx[c] * vel.x[c];
    dyy += by[c] * vel.y[c];
    dzz += bz[c] * vel.z[c];
  }
  return (dxx + dyy + dzz) / detj;
}

void add_forces(Mesh& m, int e, const double fx[8], const double fy[8], const double fz[8]) {
  const int* nl = m.nodelist(e);
  for (int c = 0; c < 8; ++c) {
    m.fx(nl[c]) += fx[c];
    m.fy(nl[c]) += fy[c];
    m.fz(nl[c]) += fz[c];
  }
}

}  // namespace

void calc_forces(Mesh& m) {
  for (int n = 0; n < m.num_node(); ++n) m.fx(n) = m.fy(n) = m.fz(n) = 0.0;
  Hex pos, vel;
  double nx[8], ny[8], nz[8], dvx[8], dvy[8], dvz[8], fx[8], fy[8], fz[8];
  for (int e = 0; e < m.num_elem(); ++e) {
    gather_nodes(m, e, pos);
    // Stress: pressure and viscosity act on the corner normals, outwards.
    node_normals(pos, nx, ny, nz);
    const double s = m.p(e) + m.q(e);
    for (int c = 0; c < 8; ++c) fx[c] = s * nx[c], fy[c] = s * ny[c], fz[c] = s * nz[c];
    add_forces(m, e, fx, fy, fz);
    // Hourglass control.
    gather_velocities(m, e, vel);
    volume_derivatives(pos, dvx, dvy, dvz);
    const double volume = m.volo(e) * m.v(e);
    hourglass_force(pos, vel, dvx, dvy, dvz, volume, -0.01 * m.elem_mass(e) * m.ss(e), fx, fy, fz);
    add_forces(m, e, fx, fy, fz);
  }
}

void calc_acceleration(Mesh& m) {
  for (int n = 0; n < m.num_node(); ++n) {
    m.xdd(n) = m.fx(n) / m.nodal_mass(n);
    m.ydd(n) = m.fy(n) / m.nodal_mass(n);
    m.zdd(n) = m.fz(n) / m.nodal_mass(n);
  }
  for (int n = 0; n < m.num_node(); ++n)
    if (m.on_symmetry_plane(n)) m.xdd(n) = 0.0;
}

void calc_velocity_position(Mesh& m) {
  const double dt = m.deltatime();
  for (int n = 0; n < m.num_node(); ++n) {
    m.xd(n) += m.xdd(n) * dt;
    m.yd(n) += m.ydd(n) * dt;
    m.zd(n) += m.zdd(n) * dt;
    if (std::fabs(m.xd(n)) < 1e-7) m.xd(n) = 0.0;
    m.x(n) += m.xd(n) * dt;
    m.y(n) += m.yd(n) * dt;
    m.z(n) += m.zd(n) * dt;
  }
}

void calc_kinematics(Mesh& m) {
  Hex pos, vel;
  double bx[8], by[8], bz[8];
  for (int e = 0; e < m.num_elem(); ++e) {
    gather_nodes(m, e, pos);
    gather_velocities(m, e, vel);
    const double vol = hex_volume(pos);
    const double vnew = vol / m.volo(e);
    m.delv(e) = vnew - m.v(e);
    m.arealg(e) = characteristic_length(pos, vol);
    const double detj = shape_derivatives(pos, bx, by, bz);
    m.vdov(e) = velocity_divergence(vel, bx, by, bz, detj);
    m.v(e) = vnew;
  }
}

// Gradients of velocity and position along the logical directions, written out in the loop
// (no helpers), from the differences of the element's opposite faces.
void calc_q_gradients(Mesh& m) {
  for (int e = 0; e < m.num_elem(); ++e) {
    const int* nl = m.nodelist(e);
    double x[8], y[8], z[8], xv[8], yv[8], zv[8];
    for (int c = 0; c < 8; ++c) {
      x[c] = m.x(nl[c]), y[c] = m.y(nl[c]), z[c] = m.z(nl[c]);
      xv[c] = m.xd(nl[c]), yv[c] = m.yd(nl[c]), zv[c] = m.zd(nl[c]);
    }
    const double vol = m.volo(e) * m.v(e);
    const double norm = 1.0 / (vol + 1e-36);
    // Face centres along xi (1,2,6,5 vs 0,3,7,4), eta (3,2,6,7 vs 0,1,5,4), zeta (4..7 vs 0..3).
    const double dxi_x = 0.25 * ((x[1] + x[2] + x[6] + x[5]) - (x[0] + x[3] + x[7] + x[4]));
    const double dxi_y = 0.25 * ((y[1] + y[2] + y[6] + y[5]) - (y[0] + y[3] + y[7] + y[4]));
    const double dxi_z = 0.25 * ((z[1] + z[2] + z[6] + z[5]) - (z[0] + z[3] + z[7] + z[4]));
    const double det_x = 0.25 * ((x[3] + x[2] + x[6] + x[7]) - (x[0] + x[1] + x[5] + x[4]));
    const double det_y = 0.25 * ((y[3] + y[2] + y[6] + y[7]) - (y[0] + y[1] + y[5] + y[4]));
    const double det_z = 0.25 * ((z[3] + z[2] + z[6] + z[7]) - (z[0] + z[1] + z[5] + z[4]));
    const double dze_x = 0.25 * ((x[4] + x[5] + x[6] + x[7]) - (x[0] + x[1] + x[2] + x[3]));
    const double dze_y = 0.25 * ((y[4] + y[5] + y[6] + y[7]) - (y[0] + y[1] + y[2] + y[3]));
    const double dze_z = 0.25 * ((z[4] + z[5] + z[6] + z[7]) - (z[0] + z[1] + z[2] + z[3]));
    const double vxi_x = 0.25 * ((xv[1] + xv[2] + xv[6] + xv[5]) - (xv[0] + xv[3] + xv[7] + xv[4]));
    const double vxi_y = 0.25 * ((yv[1] + yv[2] + yv[6] + yv[5]) - (yv[0] + yv[3] + yv[7] + yv[4]));
    const double vxi_z = 0.25 * ((zv[1] + zv[2] + zv[6] + zv[5]) - (zv[0] + zv[3] + zv[7] + zv[4]));
    const double vet_x = 0.25 * ((xv[3] + xv[2] + xv[6] + xv[7]) - (xv[0] + xv[1] + xv[5] + xv[4]));
    const double vet_y = 0.25 * ((yv[3] + yv[2] + yv[6] + yv[7]) - (yv[0] + yv[1] + yv[5] + yv[4]));
    const double vet_z = 0.25 * ((zv[3] + zv[2] + zv[6] + zv[7]) - (zv[0] + zv[1] + zv[5] + zv[4]));
    const double vze_x = 0.25 * ((xv[4] + xv[5] + xv[6] + xv[7]) - (xv[0] + xv[1] + xv[2] + xv[3]));
    const double vze_y = 0.25 * ((yv[4] + yv[5] + yv[6] + yv[7]) - (yv[0] + yv[1] + yv[2] + yv[3]));
    const double vze_z = 0.25 * ((zv[4] + zv[5] + zv[6] + zv[7]) - (zv[0] + zv[1] + zv[2] + zv[3]));
    // Normals of the planes spanned by two directions, scaled by the volume.
    double ax = det_y * dze_z - det_z * dze_y, ay = -(det_x * dze_z - det_z * dze_x),
           az = det_x * dze_y - det_y * dze_x;
    m.delx_xi(e) = vol / std::sqrt(ax * ax + ay * ay + az * az + 1e-36);
    m.delv_xi(e) = norm * (ax * vxi_x + ay * vxi_y + az * vxi_z);
    ax = dxi_y * dze_z - dxi_z * dze_y, ay = -(dxi_x * dze_z - dxi_z * dze_x),
    az = dxi_x * dze_y - dxi_y * dze_x;
    m.delx_eta(e) = vol / std::sqrt(ax * ax + ay * ay + az * az + 1e-36);
    m.delv_eta(e) = norm * (ax * vet_x + ay * vet_y + az * vet_z);
    ax = dxi_y * det_z - dxi_z * det_y, ay = -(dxi_x * det_z - dxi_z * det_x),
    az = dxi_x * det_y - dxi_y * det_x;
    m.delx_zeta(e) = vol / std::sqrt(ax * ax + ay * ay + az * az + 1e-36);
    m.delv_zeta(e) = norm * (ax * vze_x + ay * vze_y + az * vze_z);
  }
}

// Monotonic limiting of the gradients against the neighbours', then the viscosity terms.
void calc_q_region(Mesh& m) {
  const double slope_limit = 1.0, lin = 0.5, quad = 2.0 / 3.0;
  for (int e = 0; e < m.num_elem(); ++e) {
    double phi[3];
    const double dv[3] = {m.delv_xi(e), m.delv_eta(e), m.delv_zeta(e)};
    const int lo[3] = {m.elem_xm(e), m.elem_ym(e), m.elem_zm(e)};
    const int hi[3] = {m.elem_xp(e), m.elem_yp(e), m.elem_zp(e)};
    for (int d = 0; d < 3; ++d) {
      const double norm = 1.0 / (dv[d] + 1e-36);
      const double dm = (d == 0 ? m.delv_xi(lo[d]) : d == 1 ? m.delv_eta(lo[d]) : m.delv_zeta(lo[d])) * norm;
      const double dp = (d == 0 ? m.delv_xi(hi[d]) : d == 1 ? m.delv_eta(hi[d]) : m.delv_zeta(hi[d])) * norm;
      double p = 0.5 * (dm + dp);
      p = std::fmin(p, slope_limit * std::fmin(2.0 * dm, 2.0 * dp));
      phi[d] = std::fmax(0.0, std::fmin(p, slope_limit));
    }
    if (m.vdov(e) > 0) {
      m.ql(e) = m.qq(e) = 0.0;
      continue;
    }
    const double dx = m.delv_xi(e) * (1.0 - phi[0]) * m.delx_xi(e);
    const double dy = m.delv_eta(e) * (1.0 - phi[1]) * m.delx_eta(e);
    const double dz = m.delv_zeta(e) * (1.0 - phi[2]) * m.delx_zeta(e);
    const double rho = m.elem_mass(e) / (m.volo(e) * m.v(e) + 1e-36);
    m.ql(e) = -lin * rho * (std::fmin(dx, 0.0) + std::fmin(dy, 0.0) + std::fmin(dz, 0.0));
    m.qq(e) = quad * rho * (dx * dx + dy * dy + dz * dz);
  }
}

// Equation of state over one region of elements [lo, hi): a predictor, a corrector and a
// third step for the energy, each with its pressure (bulk term included) and viscosity, then
// the sound speed, written to the scratch arrays (so that a repeated evaluation computes the
// same). Loops only: no per-element calls.
void eos_region(Mesh& m, int lo, int hi, std::vector<double>& e_new, std::vector<double>& p_new,
                std::vector<double>& q_new, std::vector<double>& ss_new) {
  const double c1 = 2.0 / 3.0, e_min = 0.0, p_min = 0.0, rho0 = 1.0, sixth = 1.0 / 6.0;
  for (int e = lo; e < hi; ++e) {
    const size_t i = size_t(e - lo);
    const double v = m.v(e), delv = m.delv(e), p_old = m.p(e), q_old = m.q(e), e_old = m.e(e);
    const double ql = m.ql(e), qq = m.qq(e);
    const double compression = 1.0 / v - 1.0;
    const double vhalf = 1.0 / (v - 0.5 * delv);
    const double comp_half = vhalf - 1.0;
    const double ssq = m.vdov(e) > 0 ? 0.0 : 1.0;  // no viscosity in expansion
    double en = e_old - 0.5 * delv * (p_old + q_old);
    if (en < e_min) en = e_min;
    double p_half = c1 * (comp_half + 1.0) * en;
    if (p_half < p_min) p_half = p_min;
    double ssc = (c1 * (1.0 + 1.0 / vhalf) * en + vhalf * vhalf * p_half * c1) / rho0;
    const double q_tilde = ssq * ((ssc > 1e-36 ? std::sqrt(ssc) : 3.33e-18) * ql + qq);
    en += 0.5 * delv * (3.0 * (p_old + q_old) - 4.0 * (p_half + q_tilde));
    if (en < e_min) en = e_min;
    double p = c1 * (compression + 1.0) * en;
    if (p < p_min) p = p_min;
    ssc = (c1 * (1.0 + 1.0 / v) * en + v * v * p * c1) / rho0;
    const double q_mid = ssq * ((ssc > 1e-36 ? std::sqrt(ssc) : 3.33e-18) * ql + qq);
    en -= (7.0 * (p_old + q_old) - 8.0 * (p_half + q_tilde) + (p + q_mid)) * delv * sixth;
    if (en < e_min) en = e_min;
    p = c1 * (compression + 1.0) * en;
    if (p < p_min) p = p_min;
    ssc = (c1 * (1.0 + 1.0 / v) * en + v * v * p * c1) / rho0;
    const double q = ssq * ((ssc > 1e-36 ? std::sqrt(ssc) : 3.33e-18) * ql + qq);
    e_new[i] = en;
    p_new[i] = p;
    q_new[i] = q * 1e-12;  // kept small: the toy has no boundary to absorb it
    ss_new[i] = ssc > 1e-36 ? std::sqrt(ssc) : 3.33e-18;
  }
}

// The elements in regions, the costlier ones evaluated repeatedly, as the proxy apps model
// materials of different cost: of 11 regions, 5 once, 5 twice, the last twenty times.
void calc_eos(Mesh& m) {
  constexpr int kRegions = 11;
  const int n = m.num_elem();
  std::vector<double> e_new, p_new, q_new, ss_new;
  for (int r = 0; r < kRegions; ++r) {
    const int lo = int(int64_t(n) * r / kRegions), hi = int(int64_t(n) * (r + 1) / kRegions);
    for (auto* v : {&e_new, &p_new, &q_new, &ss_new}) v->assign(size_t(hi - lo), 0.0);
    const int rep = r < 5 ? 1 : r < kRegions - 1 ? 2 : 20;
    for (int k = 0; k < rep; ++k) eos_region(m, lo, hi, e_new, p_new, q_new, ss_new);
    for (int e = lo; e < hi; ++e) {
      const size_t i = size_t(e - lo);
      m.e(e) = e_new[i];
      m.p(e) = p_new[i];
      m.q(e) = q_new[i];
      m.ss(e) = ss_new[i];
    }
  }
}

void calc_time_constraints(Mesh& m) {
  double courant = 1e20, hydro = 1e20;
  for (int e = 0; e < m.num_elem(); ++e) {
    const double ss = m.ss(e);
    if (ss > 0) courant = std::fmin(courant, m.arealg(e) / ss);
    if (m.vdov(e) != 0) hydro = std::fmin(hydro, 0.9 / (std::fabs(m.vdov(e)) + 1e-20));
  }
  m.dtcourant() = courant;
  m.dthydro() = hydro;
}

void lagrange_step(Mesh& m) {
  calc_forces(m);
  calc_acceleration(m);
  calc_velocity_position(m);
  calc_kinematics(m);
  calc_q_gradients(m);
  calc_q_region(m);
  calc_eos(m);
  calc_time_constraints(m);
  // A step well inside the stability limits, so that every build variant runs the same
  // numbers for any number of steps.
  const double dt = std::fmin(1e-9, std::fmin(m.dtcourant(), m.dthydro()) * 0.1);
  m.time() += m.deltatime();
  m.deltatime() = dt > 0 ? dt : m.deltatime();
  ++m.cycle();
}

double total_energy(Mesh& m) {
  double s = 0;
  for (int e = 0; e < m.num_elem(); ++e) s += m.e(e);
  return s;
}

}  // namespace instr
