// critpath — compiler_hooks/gcc_filter.h
//
// A filter file (filter.h, Score-P syntax) as GCC options, so that filtered functions are
// never instrumented at all: `critpath-cc/-cxx/-f90 --filter FILE` (or CRITPATH_FILTER=FILE
// at build time) runs `critpath-filter --gcc FILE`, which prints what gcc_exclusions()
// returns as
//
//   -finstrument-functions-exclude-function-list=<name>,<name>,...
//   -finstrument-functions-exclude-file-list=<path part>,...
//
// GCC's semantics (gcc/gimplify.cc, flag_instrument_functions_exclude_p), checked with GCC 12:
// * A function is left out when one list entry is a SUBSTRING of its "printable" name: the
//   qualified name without return type or parameters ("ns::Solver<double>::step",
//   "{anonymous}::helper", "main()::<lambda(int)>::operator()"). C: the identifier.
//   Fortran: the procedure's name alone ("compute" for module work's compute, "p" for
//   program p); critpath names those "work::compute" and "plain_sub_".
// * A function is left out when one file entry is a substring of the path of the file that
//   defines it, spelled as the compiler saw it (the command line's path for the main file,
//   the include search's result for headers).
// * Entries are separated by commas: no entry can contain one. There is no include list.
//
// What maps (Mapping::kMapped): the function or file the rule names is left out; any other
// whose name contains the same substring is left out too (GCC cannot anchor a match):
// * region names without wildcards (demangled, or MANGLED ones, which are demangled first):
//   return type, parameters, cv/ref qualifiers and " [clone ...]" suffixes are dropped,
//   "(anonymous namespace)" becomes "{anonymous}", a lambda "{lambda(int)#1}" becomes
//   "<lambda(int)>" and the entry starts there (GCC spells the enclosing function
//   differently). Template arguments are kept when the demangler and GCC spell them alike
//   (identifiers, plain numbers, '*', '&', nested templates). When they are not: a function
//   template's arguments are cut after '<' ("ns::convert<": all its instantiations); a class
//   template's, the part after them is used when it still names a class and a member
//   ("::Inner::get");
// * `*name*`, `name*` and `*name` with `name` made of identifier characters and "::"
//   (Fortran: the part after the last "::");
// * file patterns without wildcards, `*part*`, `part*` and `*part`, any characters but ','.
// What does not (Mapping::kRuntimeOnly; critpath's runtime filter still applies it when
// CRITPATH_FILTER names the file at run time): EXCLUDE rules followed by an INCLUDE rule in
// the same block (GCC cannot take a function back), wildcards elsewhere than at the ends
// ('?', '[...]', `a*b`) and `*` alone, MANGLED patterns with wildcards, template arguments
// spelled differently ("unsigned long" is GCC's "long unsigned int", "char const*" its
// "const char*", default arguments are omitted) without a usable part, names without a
// symbol ("0x4011a0"), Fortran's MAIN__, and anything containing a comma. INCLUDE rules
// leave nothing out (Mapping::kNotNeeded).
//
// Not on any hot path (a build tool and the unit tests use it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler_hooks/filter.h"

namespace critpath::hooks {

enum class SourceLang { kC, kCxx, kFortran };

enum class Mapping {
  kMapped,       // GCC leaves the functions the pattern names out (and any whose name contains it)
  kRuntimeOnly,  // cannot be expressed for GCC; only the runtime filter applies it
  kNotNeeded,    // an INCLUDE rule: nothing to leave out at compile time
};

// One pattern of the filter file and what became of it.
struct GccEntry {
  bool file_rule = false;  // a file-name pattern (else a region-name pattern)
  bool include = false;    // an INCLUDE rule
  std::string pattern;     // as written
  Mapping mapping = Mapping::kRuntimeOnly;
  std::string gcc;  // the list entry (kMapped)
  std::string why;  // kRuntimeOnly: the reason
};

struct GccExclusions {
  std::vector<std::string> functions;  // -finstrument-functions-exclude-function-list entries
  std::vector<std::string> files;      // -finstrument-functions-exclude-file-list entries
  std::vector<GccEntry> entries;       // every pattern of the file, in file order
  size_t runtime_only() const;
};

// The exclusions GCC can apply for `filter` (duplicates removed, file order kept).
GccExclusions gcc_exclusions(const Filter& filter, SourceLang lang);

// GCC's printable name for a function critpath knows by `name` (demangled, as in reports),
// or "" with `why` set when GCC spells it in a way that cannot be derived.
std::string gcc_function_name(std::string_view name, SourceLang lang, std::string* why);

// The command-line options for `x` (none when both lists are empty).
std::vector<std::string> gcc_options(const GccExclusions& x);

}  // namespace critpath::hooks
