// critpath — compiler_hooks/fortran_api.cpp: the length-counted region definition behind the
// Fortran `critpath` module (compiler_hooks/fortran/critpath.f90). Fortran strings are not
// NUL-terminated; this copies the name (trailing blanks already trimmed by the module) and
// forwards to critpath_region_define.
#include <cstring>
#include <string>

#include "critpath.h"
#include "libtrace/runtime/status.h"

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR unsigned critpath_region_define_n(const char* name,
                                                                              size_t length) {
  if (!name || length == 0) return 0;
  char buf[256];
  if (length < sizeof buf) {
    std::memcpy(buf, name, length);
    buf[length] = 0;
    return critpath_region_define(buf);
  }
  try {
    const std::string copy(name, length);
    return critpath_region_define(copy.c_str());
  } catch (...) {
    return 0;
  }
}
