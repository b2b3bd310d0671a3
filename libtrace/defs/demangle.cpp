// critpath — libtrace/defs/demangle.cpp: C++ and gfortran symbol names for people (demangle.h).
// Its own file so that tools (critpath-filter) can demangle without the libdw backend.
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "libtrace/defs/demangle.h"

namespace critpath::defs {
namespace {

// "__mod_MOD_proc" (gfortran module procedure) -> "mod::proc"; empty when not of that form.
std::string fortran_module_name(const char* s) {
  if (std::strncmp(s, "__", 2) != 0) return {};
  const char* mod = std::strstr(s + 2, "_MOD_");
  if (!mod || mod == s + 2 || mod[5] == 0) return {};
  return std::string(s + 2, size_t(mod - (s + 2))) + "::" + (mod + 5);
}

}  // namespace

std::string demangle(const char* mangled) {
  if (!mangled || !*mangled) return {};
  if (mangled[0] == '_' && mangled[1] == 'Z') {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    if (status == 0 && d) {
      std::string out(d);
      std::free(d);
      return out;
    }
    std::free(d);
  }
  std::string f = fortran_module_name(mangled);
  return f.empty() ? std::string(mangled) : f;
}

}  // namespace critpath::defs
