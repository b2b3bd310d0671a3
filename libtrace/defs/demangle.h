// critpath — libtrace/defs/demangle.h: C++ and gfortran symbol names for people. Here, below
// both users, so that the compiler hooks (symbols.h: the names of instrumented functions), the
// filter tool and the analyzer's OTF2 import (region names an archive holds mangled) share one
// demangler.
#pragma once

#include <string>

namespace critpath::defs {

// Demangles a C++ (Itanium ABI: "_Z10latesenderii" -> "latesender(int, int)") or gfortran
// module name ("__solver_MOD_step" -> "solver::step"); returns `mangled` unchanged when it is
// neither, "" for nullptr.
std::string demangle(const char* mangled);

}  // namespace critpath::defs
