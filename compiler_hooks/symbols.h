// critpath — compiler_hooks/symbols.h
//
// Names for code addresses: function addresses from __cyg_profile_func_enter and return
// addresses of call sites. Used on cold paths only: on an address's first visit when a filter
// file needs the name, otherwise at finalize (recorder stop), when the hooks rename their
// placeholder regions ("0x<addr>", "callsite#<n>").
//
// Backend (CRITPATH_HAVE_LIBDW): elfutils libdwfl. It reads the process's modules from
// /proc/self/maps, so PIE executables and shared libraries are handled with their load bias,
// including libraries dlopen'ed after start (an address outside every known module triggers
// one re-scan of the maps). Names come from the ELF symbol table (.symtab, falling back to
// .dynsym), file and line from DWARF line tables where the module has debug info. Why
// libdwfl and not libbfd: it is a small, stable C API that already knows the Linux process
// layout (bias, separate debuginfo via build-id), and it is LGPL (binutils' BFD is GPL and
// has no stable API). Without libdw the fallback is dladdr(): exported (dynamic) symbols only,
// no file/line.
//
// C++ names are demangled with abi::__cxa_demangle (templates readable: "Vec<double>::dot(
// Vec<double> const&) const"); gfortran module procedures "__m_MOD_f" become "m::f"
// (libtrace/defs/demangle.cpp, which needs neither libdw nor a process: critpath-filter and the
// OTF2 import use it too).
//
// Thread-safe (one mutex); allocates; never call it on a hot path or from a signal handler.
#pragma once

#include <cstdint>
#include <string>

#include "libtrace/defs/demangle.h"

namespace critpath::hooks {

struct SymbolInfo {
  bool found = false;    // a symbol covers the address
  std::string name;      // display name: demangled, or "0x<addr>" when not found
  std::string mangled;   // the symbol as in the ELF table ("" when not found)
  std::string file;      // source file (as recorded in DWARF), "" when unknown
  uint32_t line = 0;     // source line, 0 when unknown
  std::string module;    // path of the executable or shared library, "" when unknown
  uintptr_t offset = 0;  // address - symbol start
};

// Resolves one address. `is_return_address`: the address follows a call instruction (call
// sites); the line of the call itself is looked up (address - 1).
SymbolInfo resolve_symbol(uintptr_t addr, bool is_return_address = false);

// Demangles a C++ (Itanium ABI) or gfortran module name; returns `mangled` unchanged when it
// is neither (libtrace/defs/demangle.h, which the OTF2 import shares).
inline std::string demangle(const char* mangled) { return defs::demangle(mangled); }

// Drops the cached module list (the next lookup re-reads /proc/self/maps). For tests.
void reset_symbol_cache();

}  // namespace critpath::hooks
