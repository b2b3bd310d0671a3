// critpath — compiler_hooks/symbols.cpp: address -> function, file, line (symbols.h).
#include "compiler_hooks/symbols.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>

#ifdef CRITPATH_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

namespace critpath::hooks {
namespace {

std::mutex g_mu;

std::string hex(uintptr_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%zx", size_t(a));
  return buf;
}

#ifdef CRITPATH_HAVE_LIBDW
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kCallbacks = {
    dwfl_linux_proc_find_elf,
    dwfl_standard_find_debuginfo,
    nullptr,
    &g_debuginfo_path,
};
Dwfl* g_dwfl = nullptr;  // requires g_mu

bool report_modules(Dwfl* d) {
  dwfl_report_begin(d);
  const int rc = dwfl_linux_proc_report(d, getpid());
  dwfl_report_end(d, nullptr, nullptr);
  return rc == 0;
}

Dwfl_Module* module_of(uintptr_t addr) {
  if (!g_dwfl) {
    g_dwfl = dwfl_begin(&kCallbacks);
    if (!g_dwfl) return nullptr;
    report_modules(g_dwfl);
  }
  Dwfl_Module* m = dwfl_addrmodule(g_dwfl, Dwarf_Addr(addr));
  if (!m) {  // loaded after the last scan (dlopen): re-read the maps once
    report_modules(g_dwfl);
    m = dwfl_addrmodule(g_dwfl, Dwarf_Addr(addr));
  }
  return m;
}
#endif

}  // namespace

SymbolInfo resolve_symbol(uintptr_t addr, bool is_return_address) {
  SymbolInfo out;
  const uintptr_t look = is_return_address && addr > 0 ? addr - 1 : addr;
  std::lock_guard<std::mutex> lock(g_mu);
#ifdef CRITPATH_HAVE_LIBDW
  if (Dwfl_Module* m = module_of(look)) {
    const char* modname = dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (modname) out.module = modname;
    GElf_Sym sym;
    GElf_Off off = 0;
    const char* name = dwfl_module_addrinfo(m, Dwarf_Addr(look), &off, &sym, nullptr, nullptr, nullptr);
    if (name && *name) {
      out.found = true;
      out.mangled = name;
      out.name = demangle(name);
      out.offset = uintptr_t(off) + (look != addr ? 1 : 0);
    }
    Dwarf_Addr bias = 0;
    if (dwfl_module_getdwarf(m, &bias) != nullptr) {
      if (Dwfl_Line* l = dwfl_module_getsrc(m, Dwarf_Addr(look))) {
        int line = 0;
        const char* file = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr);
        if (file) out.file = file;
        out.line = uint32_t(line > 0 ? line : 0);
      }
    }
  }
#endif
  if (!out.found) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(look), &info) != 0) {
      if (out.module.empty() && info.dli_fname) out.module = info.dli_fname;
      if (info.dli_sname) {
        out.found = true;
        out.mangled = info.dli_sname;
        out.name = demangle(info.dli_sname);
        out.offset = addr - reinterpret_cast<uintptr_t>(info.dli_saddr);
      }
    }
  }
  if (!out.found) {
    // No symbol: name the address by module and offset so it stays recognisable.
    out.name = hex(addr);
    if (!out.module.empty()) {
      Dl_info info;
      if (dladdr(reinterpret_cast<void*>(look), &info) != 0 && info.dli_fbase) {
        const char* base = std::strrchr(out.module.c_str(), '/');
        out.name = std::string(base ? base + 1 : out.module.c_str()) + "+" +
                   hex(addr - reinterpret_cast<uintptr_t>(info.dli_fbase));
      }
    }
  }
  return out;
}

void reset_symbol_cache() {
  std::lock_guard<std::mutex> lock(g_mu);
#ifdef CRITPATH_HAVE_LIBDW
  if (g_dwfl) dwfl_end(g_dwfl);
  g_dwfl = nullptr;
#endif
}

}  // namespace critpath::hooks
