// critpath — compiler_hooks/filter.cpp: filter file parser and wildcard matcher (filter.h).
#include "compiler_hooks/filter.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace critpath::hooks {
namespace {

// Matches one bracket expression at pattern[pi] ('[' already seen at pi) against c. Sets
// `next` to the index after ']' and returns whether c is in the set. A '[' without a
// closing ']' is an ordinary character (returns false, next = npos).
bool match_class(std::string_view p, size_t pi, char c, size_t& next) {
  size_t i = pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) hi = p[i + 3], ++i;
      i += 2;
    }
    if (lo <= c && c <= hi) found = true;
    ++i;
  }
  if (i >= p.size()) {
    next = std::string_view::npos;
    return false;
  }
  next = i + 1;
  return found != negate;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits a line into words at blanks, dropping the comment; "\#" becomes '#'. Other
// backslashes are kept (they are pattern escapes): "\ " is a blank inside a word, as in the
// demangled names of the suggested filter file ("foo(int,\ double)").
std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      cur += '#';
      have = true;
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < line.size() && (line[i + 1] == ' ' || line[i + 1] == '\t')) {
      cur += line.substr(i, 2);
      have = true;
      ++i;
      continue;
    }
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      if (have) out.push_back(std::move(cur));
      cur.clear();
      have = false;
      continue;
    }
    cur += c;
    have = true;
  }
  if (have) out.push_back(std::move(cur));
  return out;
}

}  // namespace

bool wildcard_match(std::string_view p, std::string_view t) {
  // Iterative matcher with one backtrack point (the last '*'), which is enough because '*'
  // matches any character including '/'.
  size_t pi = 0, ti = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    if (pi < p.size()) {
      const char c = p[pi];
      if (c == '*') {
        star_p = pi++;
        star_t = ti;
        continue;
      }
      if (c == '?') {
        ++pi;
        ++ti;
        continue;
      }
      if (c == '[') {
        size_t next = 0;
        const bool in = match_class(p, pi, t[ti], next);
        if (next != std::string_view::npos) {
          if (in) {
            pi = next;
            ++ti;
            continue;
          }
        } else if (t[ti] == '[') {  // unterminated: a literal '['
          ++pi;
          ++ti;
          continue;
        }
      } else {
        char lit = c;
        size_t adv = 1;
        if (c == '\\' && pi + 1 < p.size()) lit = p[pi + 1], adv = 2;
        if (lit == t[ti]) {
          pi += adv;
          ++ti;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::string escape_wildcard(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '#' || c == ' ' || c == '\t')
      out += '\\';
    out += c;
  }
  return out;
}

Status Filter::parse(std::string_view text, std::string* error) {
  file_rules_.clear();
  region_rules_.clear();
  enum class Block { kNone, kFiles, kRegions } block = Block::kNone;
  auto fail = [&](size_t line_no, const std::string& why) {
    if (error) *error = "line " + std::to_string(line_no) + ": " + why;
    file_rules_.clear();
    region_rules_.clear();
    return Status::kInvalidArgument;
  };
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const std::vector<std::string> w = words_of(line);
    if (w.empty()) continue;
    const std::string& k = w[0];
    auto is = [&](const char* suffix) {
      return k == std::string("SCOREP_") + suffix || k == std::string("CRITPATH_") + suffix;
    };
    if (is("FILE_NAMES_BEGIN") || is("REGION_NAMES_BEGIN")) {
      if (block != Block::kNone) return fail(line_no, "'" + k + "' inside another block");
      if (w.size() != 1) return fail(line_no, "unexpected text after '" + k + "'");
      block = is("FILE_NAMES_BEGIN") ? Block::kFiles : Block::kRegions;
      continue;
    }
    if (is("FILE_NAMES_END") || is("REGION_NAMES_END")) {
      const Block want = is("FILE_NAMES_END") ? Block::kFiles : Block::kRegions;
      if (block != want) return fail(line_no, "'" + k + "' without its BEGIN");
      block = Block::kNone;
      continue;
    }
    if (k != "INCLUDE" && k != "EXCLUDE")
      return fail(line_no, "expected INCLUDE, EXCLUDE or a block keyword, found '" + k + "'");
    if (block == Block::kNone) return fail(line_no, "'" + k + "' outside a BEGIN/END block");
    Rule r;
    r.include = k == "INCLUDE";
    bool mangled = false;
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "MANGLED" || w[i] == "DEMANGLED") {
        if (block == Block::kFiles) return fail(line_no, "'" + w[i] + "' in a file name rule");
        mangled = w[i] == "MANGLED";
        continue;
      }
      r.patterns.push_back({w[i], mangled});
    }
    if (r.patterns.empty()) return fail(line_no, "'" + k + "' without a pattern");
    (block == Block::kFiles ? file_rules_ : region_rules_).push_back(std::move(r));
  }
  if (block != Block::kNone) return fail(line_no, "missing END of the last block");
  return Status::kOk;
}

Status Filter::load(const std::string& path, std::string* error) {
  // A directory opens as an empty stream: it would pass as a file without rules.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (error) *error = path + " is a directory, not a filter file";
    return Status::kIoError;
  }
  std::ifstream f(path);
  if (!f) {
    if (error) *error = "cannot read " + path;
    return Status::kIoError;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), error);
}

bool Filter::excluded(std::string_view demangled, std::string_view mangled, std::string_view file) const {
  bool included = true;
  if (!file.empty()) {
    for (const Rule& r : file_rules_)
      for (const Pattern& p : r.patterns)
        if (wildcard_match(p.text, file)) {
          included = r.include;
          break;
        }
    if (!included) return true;
  }
  for (const Rule& r : region_rules_)
    for (const Pattern& p : r.patterns)
      if (wildcard_match(p.text, p.mangled ? mangled : demangled)) {
        included = r.include;
        break;
      }
  return !included;
}

}  // namespace critpath::hooks
