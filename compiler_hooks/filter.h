// critpath — compiler_hooks/filter.h
//
// The runtime filter for compiler-instrumented functions (CRITPATH_FILTER=<file>). It is
// consulted once per function address, on the address's first visit; the decision is then
// cached in the hooks' address table (cyg_profile.cpp), so a filtered function costs one hash
// lookup per call from then on.
//
// The file syntax is Score-P's (so users can reuse their filter files), with critpath's own
// block keywords accepted as synonyms:
//
//   SCOREP_FILE_NAMES_BEGIN          (or CRITPATH_FILE_NAMES_BEGIN)
//     EXCLUDE */third_party/*
//     INCLUDE */third_party/keep.c
//   SCOREP_FILE_NAMES_END
//   SCOREP_REGION_NAMES_BEGIN        (or CRITPATH_REGION_NAMES_BEGIN)
//     EXCLUDE *
//     INCLUDE main solve* MANGLED _Z3fooi DEMANGLED bar(int)
//   SCOREP_REGION_NAMES_END
//
// * Everything starts included. Within a block, rules apply in order and the last rule that
//   matches decides. File rules are evaluated first: a function whose source file is excluded
//   stays excluded whatever the region rules say.
// * Patterns are shell wildcards: `*` (also matches '/'), `?`, `[abc]`, `[a-z]`, `[!x]`, and
//   `\` escapes the next character ("\ " is a blank inside a pattern: C++ names have them).
//   Several patterns may follow one keyword, separated by blanks.
// * Region patterns match the demangled name ("ns::f<int>(int)") unless the keyword MANGLED
//   precedes them in the rule ("_ZN2ns1fIiEEvi"); DEMANGLED switches back.
// * `#` starts a comment to the end of the line; `\#` is a literal '#'. Keywords are
//   case-sensitive.
//
// Not on the hot path; nothing here is called after an address's first visit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::hooks {

// Shell-wildcard match of `text` against `pattern` (whole string), as described above.
bool wildcard_match(std::string_view pattern, std::string_view text);

// `name` with the wildcard characters * ? [ ] \ and #, and blanks, escaped, so that a filter
// rule matches exactly that name (analyzer/report writes the suggested filter file alike).
std::string escape_wildcard(std::string_view name);

class Filter {
 public:
  // Parses a filter file's text, replacing any previous rules. Returns kOk, or
  // kInvalidArgument with `error` = "line N: reason" (the rules parsed so far are dropped).
  Status parse(std::string_view text, std::string* error);
  // Reads and parses a file; kIoError when it cannot be read ("cannot read <path>") or is
  // a directory.
  Status load(const std::string& path, std::string* error);

  bool empty() const { return file_rules_.empty() && region_rules_.empty(); }
  bool has_file_rules() const { return !file_rules_.empty(); }
  size_t rule_count() const { return file_rules_.size() + region_rules_.size(); }

  // True when the function is filtered out. `file` may be empty (no debug info: file rules
  // cannot match it). Thread-safe (const).
  bool excluded(std::string_view demangled, std::string_view mangled, std::string_view file) const;

  struct Pattern {
    std::string text;  // as written (wildcards and escapes included)
    bool mangled = false;
  };
  struct Rule {
    bool include = false;
    std::vector<Pattern> patterns;
  };
  // The rules in file order (gcc_filter.h translates them for the compiler).
  const std::vector<Rule>& file_rules() const { return file_rules_; }
  const std::vector<Rule>& region_rules() const { return region_rules_; }

 private:
  std::vector<Rule> file_rules_;
  std::vector<Rule> region_rules_;
};

}  // namespace critpath::hooks
