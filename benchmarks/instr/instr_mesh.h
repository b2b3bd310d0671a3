// critpath — benchmarks/instr/instr_mesh.h: the mesh of the instrumentation-cost kernel.
//
// A hexahedral mesh in the style of the DOE proxy apps (nodal coordinates, velocities and
// forces; per-element energy, pressure and volume), reached through one tiny accessor per
// field, defined here in the header as such codes do. Compiled plainly these accessors vanish
// into their callers; `-finstrument-functions` gives every one of their inlined copies an
// enter and an exit hook, which is what this kernel measures (benchmarks/run_instr.sh).
#pragma once

#include <vector>

namespace instr {

class Mesh {
 public:
  explicit Mesh(int edge);

  int edge() const { return edge_; }
  int num_elem() const { return num_elem_; }
  int num_node() const { return num_node_; }

  // Nodes.
  double& x(int n) { return x_[n]; }
  double& y(int n) { return y_[n]; }
  double& z(int n) { return z_[n]; }
  double& xd(int n) { return xd_[n]; }
  double& yd(int n) { return yd_[n]; }
  double& zd(int n) { return zd_[n]; }
  double& xdd(int n) { return xdd_[n]; }
  double& ydd(int n) { return ydd_[n]; }
  double& zdd(int n) { return zdd_[n]; }
  double& fx(int n) { return fx_[n]; }
  double& fy(int n) { return fy_[n]; }
  double& fz(int n) { return fz_[n]; }
  double& nodal_mass(int n) { return nodal_mass_[n]; }
  bool on_symmetry_plane(int n) const { return n % (edge_ + 1) == 0; }

  // Elements.
  const int* nodelist(int e) const { return &nodelist_[size_t(8) * size_t(e)]; }
  double& e(int i) { return e_[i]; }
  double& p(int i) { return p_[i]; }
  double& q(int i) { return q_[i]; }
  double& v(int i) { return v_[i]; }
  double& volo(int i) { return volo_[i]; }
  double& delv(int i) { return delv_[i]; }
  double& vdov(int i) { return vdov_[i]; }
  double& arealg(int i) { return arealg_[i]; }
  double& ss(int i) { return ss_[i]; }
  double& elem_mass(int i) { return elem_mass_[i]; }
  double& ql(int i) { return ql_[i]; }  // linear and quadratic artificial viscosity terms
  double& qq(int i) { return qq_[i]; }
  // Velocity and position gradients along the element's three logical directions.
  double& delv_xi(int i) { return delv_xi_[i]; }
  double& delv_eta(int i) { return delv_eta_[i]; }
  double& delv_zeta(int i) { return delv_zeta_[i]; }
  double& delx_xi(int i) { return delx_xi_[i]; }
  double& delx_eta(int i) { return delx_eta_[i]; }
  double& delx_zeta(int i) { return delx_zeta_[i]; }
  // Neighbouring elements (the element itself at the boundary).
  int elem_xm(int i) const { return i % edge_ == 0 ? i : i - 1; }
  int elem_xp(int i) const { return (i + 1) % edge_ == 0 ? i : i + 1; }
  int elem_ym(int i) const { return (i / edge_) % edge_ == 0 ? i : i - edge_; }
  int elem_yp(int i) const { return (i / edge_ + 1) % edge_ == 0 ? i : i + edge_; }
  int elem_zm(int i) const { return i < edge_ * edge_ ? i : i - edge_ * edge_; }
  int elem_zp(int i) const { return i + edge_ * edge_ >= num_elem_ ? i : i + edge_ * edge_; }

  // Global state.
  double& time() { return time_; }
  double& deltatime() { return deltatime_; }
  double& dtcourant() { return dtcourant_; }
  double& dthydro() { return dthydro_; }
  int& cycle() { return cycle_; }

 private:
  int edge_, num_elem_, num_node_;
  std::vector<double> x_, y_, z_, xd_, yd_, zd_, xdd_, ydd_, zdd_, fx_, fy_, fz_, nodal_mass_;
  std::vector<int> nodelist_;
  std::vector<double> e_, p_, q_, v_, volo_, delv_, vdov_, arealg_, ss_, elem_mass_, ql_, qq_;
  std::vector<double> delv_xi_, delv_eta_, delv_zeta_, delx_xi_, delx_eta_, delx_zeta_;
  double time_ = 0, deltatime_ = 1e-9, dtcourant_ = 1e20, dthydro_ = 1e20;
  int cycle_ = 0;
};

// One Lagrange time step (instr_kernel.cc).
void lagrange_step(Mesh& m);
// Sum of the element energies (checks that variants compute the same thing).
double total_energy(Mesh& m);

}  // namespace instr
