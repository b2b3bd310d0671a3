// critpath — tools/critpath_filter.cpp: critpath-filter, a filter file as compiler options.
//
//   critpath-filter --gcc [--lang c|c++|fortran] [--note] FILE
//       prints the GCC options that leave FILE's excluded functions uninstrumented, one per
//       line (nothing when none apply); --note adds one `critpath:` line on stderr when some
//       rules cannot be applied at compile time. critpath-cc/-cxx/-f90 run this for
//       `--filter FILE` and CRITPATH_FILTER=FILE.
//   critpath-filter --explain [--lang c|c++|fortran] FILE
//       one line per pattern: what GCC gets, or why the pattern stays a run-time rule.
//
// The translation and GCC's matching rules: compiler_hooks/gcc_filter.h. Exit status 0, or 2
// when FILE cannot be read or parsed (the message names the line) or the usage is wrong.
#include <cstdio>
#include <cstring>
#include <string>

#include "compiler_hooks/filter.h"
#include "compiler_hooks/gcc_filter.h"

using namespace critpath;
using namespace critpath::hooks;

namespace {

int usage() {
  std::fprintf(stderr, "usage: critpath-filter --gcc [--lang c|c++|fortran] [--note] FILE\n"
                       "       critpath-filter --explain [--lang c|c++|fortran] FILE\n");
  return 2;
}

const char* mapping_name(Mapping m) {
  switch (m) {
    case Mapping::kMapped: return "gcc";
    case Mapping::kRuntimeOnly: return "run time only";
    case Mapping::kNotNeeded: return "nothing to exclude";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  enum { kNone, kGcc, kExplain } mode = kNone;
  SourceLang lang = SourceLang::kCxx;
  bool note = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gcc") {
      mode = kGcc;
    } else if (a == "--explain") {
      mode = kExplain;
    } else if (a == "--note") {
      note = true;
    } else if (a == "--lang" && i + 1 < argc) {
      const std::string l = argv[++i];
      if (l == "c") lang = SourceLang::kC;
      else if (l == "c++" || l == "cxx") lang = SourceLang::kCxx;
      else if (l == "fortran") lang = SourceLang::kFortran;
      else return usage();
    } else if (a == "--") {
      if (i + 1 < argc) path = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return usage();
    } else {
      path = argv[i];
    }
  }
  if (mode == kNone || !path) return usage();
  Filter f;
  std::string err;
  if (f.load(path, &err) != Status::kOk) {
    std::fprintf(stderr, "critpath: filter file %s: %s\n", path, err.c_str());
    return 2;
  }
  const GccExclusions x = gcc_exclusions(f, lang);
  if (mode == kGcc) {
    for (const std::string& o : gcc_options(x)) std::printf("%s\n", o.c_str());
    const size_t left = x.runtime_only();
    if (note && left > 0)
      std::fprintf(stderr,
                   "critpath: %zu of %zu patterns of %s cannot be applied at compile time; their "
                   "functions stay instrumented (critpath-filter --explain %s)\n",
                   left, x.entries.size(), path, path);
    return 0;
  }
  for (const GccEntry& e : x.entries) {
    std::printf("%-7s %-8s %-40s -> %s: %s\n", e.include ? "INCLUDE" : "EXCLUDE",
                e.file_rule ? "file" : "region", e.pattern.c_str(), mapping_name(e.mapping),
                e.mapping == Mapping::kMapped ? ("\"" + e.gcc + "\"").c_str() : e.why.c_str());
  }
  std::printf("%zu patterns: %zu function and %zu file entries for GCC, %zu run time only\n",
              x.entries.size(), x.functions.size(), x.files.size(), x.runtime_only());
  return 0;
}
