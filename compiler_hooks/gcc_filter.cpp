// critpath — compiler_hooks/gcc_filter.cpp: a filter file as GCC exclusion lists (gcc_filter.h).
#include "compiler_hooks/gcc_filter.h"

#include <algorithm>

#include "compiler_hooks/symbols.h"

namespace critpath::hooks {
namespace {

bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

bool ends_with(std::string_view s, std::string_view t) {
  return s.size() >= t.size() && s.substr(s.size() - t.size()) == t;
}

// A pattern as literal pieces and wildcards. kOther: '?' or a bracket expression.
enum class Tok { kLit, kStar, kOther };
struct Piece {
  Tok tok;
  std::string text;  // kLit: the unescaped characters
};

std::vector<Piece> tokenize(std::string_view p) {
  std::vector<Piece> out;
  auto lit = [&](char c) {
    if (out.empty() || out.back().tok != Tok::kLit) out.push_back({Tok::kLit, ""});
    out.back().text += c;
  };
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      lit(p[++i]);
    } else if (c == '*') {
      if (out.empty() || out.back().tok != Tok::kStar) out.push_back({Tok::kStar, ""});
    } else if (c == '?' || c == '[') {
      out.push_back({Tok::kOther, ""});
    } else {
      lit(c);
    }
  }
  return out;
}

// The shapes GCC's substring match can express: `lit`, `*lit*`, `lit*`, `*lit`. Returns the
// literal and whether the pattern was a plain literal (no wildcard), or false.
bool substring_of(const std::vector<Piece>& t, std::string& lit, bool& whole, bool& at_end) {
  whole = false;
  at_end = false;
  if (t.size() == 1 && t[0].tok == Tok::kLit) {
    lit = t[0].text;
    whole = true;
    at_end = true;
    return true;
  }
  if (t.size() == 3 && t[0].tok == Tok::kStar && t[1].tok == Tok::kLit && t[2].tok == Tok::kStar) {
    lit = t[1].text;
    return true;
  }
  if (t.size() == 2 && t[0].tok == Tok::kLit && t[1].tok == Tok::kStar) {
    lit = t[0].text;
    return true;
  }
  if (t.size() == 2 && t[0].tok == Tok::kStar && t[1].tok == Tok::kLit) {
    lit = t[1].text;
    at_end = true;
    return true;
  }
  return false;
}

bool scope_chars_only(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_ident(c) || c == ':' || c == '~'; });
}

// Words the demangler and GCC spell differently inside template arguments ("unsigned long"
// vs "long unsigned int", "char const" vs "const char"), and numbers with a type suffix.
bool plain_word(std::string_view w) {
  static const char* const kBad[] = {"const", "volatile", "unsigned", "signed",
                                     "long",  "short",    "restrict", "__int128"};
  for (const char* b : kBad)
    if (w == b) return false;
  if (!w.empty() && w[0] >= '0' && w[0] <= '9')
    return std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
  return true;
}

// Template arguments (the text between '<' and its '>') spelled alike by both.
bool plain_args(std::string_view a) {
  size_t i = 0;
  while (i < a.size()) {
    const char c = a[i];
    if (is_ident(c)) {
      size_t j = i;
      while (j < a.size() && is_ident(a[j])) ++j;
      if (!plain_word(a.substr(i, j - i))) return false;
      i = j;
      continue;
    }
    if (c == '-' && i + 1 < a.size() && a[i + 1] >= '0' && a[i + 1] <= '9') {
      ++i;
      continue;
    }
    if (c == ' ') {  // only in "> >", which both print
      if (i + 1 >= a.size() || a[i + 1] != '>') return false;
      ++i;
      continue;
    }
    if (c == ':' || c == '<' || c == '>' || c == '*' || c == '&' || c == '{' || c == '}') {
      ++i;
      continue;
    }
    return false;  // ',', '(', '[', ...
  }
  return true;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// Position of the "operator" keyword that starts an operator's name, or npos.
size_t operator_pos(std::string_view s) {
  for (size_t p = s.find("operator"); p != std::string_view::npos; p = s.find("operator", p + 1)) {
    const bool start_ok = p == 0 || s[p - 1] == ':' || s[p - 1] == ' ';
    const bool end_ok = p + 8 >= s.size() || !is_ident(s[p + 8]);
    if (start_ok && end_ok) return p;
  }
  return std::string_view::npos;
}

// Splits at "::" outside <>, (), {} and [].
std::vector<std::string> split_scopes(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == '}' || c == ']') --depth;
    if (depth == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      out.emplace_back(s.substr(from, i - from));
      from = i + 2;
      ++i;
    }
  }
  out.emplace_back(s.substr(from));
  return out;
}

std::string join(const std::vector<std::string>& v, size_t from, size_t to) {
  std::string o;
  for (size_t i = from; i < to; ++i) o += (i > from ? "::" : "") + v[i];
  return o;
}

std::string runtime_only(std::string* why, const char* reason) {
  if (why) *why = reason;
  return {};
}

}  // namespace

size_t GccExclusions::runtime_only() const {
  return size_t(std::count_if(entries.begin(), entries.end(),
                              [](const GccEntry& e) { return e.mapping == Mapping::kRuntimeOnly; }));
}

std::string gcc_function_name(std::string_view name, SourceLang lang, std::string* why) {
  std::string s(name);
  // " [clone .constprop.0]" and the like: the clone of a function GCC names without it.
  for (size_t c; (c = s.rfind(" [clone ")) != std::string::npos && s.back() == ']';) s.erase(c);
  if (s.empty() || s.rfind("0x", 0) == 0 || s.find("+0x") != std::string::npos)
    return runtime_only(why, "no symbol name");
  if (lang == SourceLang::kFortran && s.find('(') == std::string::npos) {
    if (s == "MAIN__") return runtime_only(why, "the main program: GCC knows it by its PROGRAM name");
    const size_t m = s.rfind("::");
    if (m != std::string::npos) s.erase(0, m + 2);  // module procedure: GCC's name has no module
    else if (s.size() > 1 && s.back() == '_')
      s.pop_back();  // external procedure: the symbol's trailing underscore
    if (!scope_chars_only(s)) return runtime_only(why, "not a Fortran procedure name");
    return s;
  }
  // Trailing qualifiers of member functions, then the parameter list.
  for (bool again = true; again;) {
    again = false;
    for (const char* q : {" const", " volatile", " &&", " &", " noexcept"})
      if (ends_with(s, q)) {
        s.erase(s.size() - std::string_view(q).size());
        again = true;
      }
  }
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    size_t i = s.size();
    while (i-- > 0) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) break;
    }
    if (i == std::string::npos || depth != 0) return runtime_only(why, "unbalanced parentheses");
    s.erase(i);
  }
  // Return type (function templates): everything up to the last space outside brackets,
  // before an operator's name (whose characters are not brackets).
  const size_t op = operator_pos(s);
  const size_t scan_end = op == std::string::npos ? s.size() : op;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i < scan_end; ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == '}' || c == ']') --depth;
    if (depth == 0 && c == ' ') start = i + 1;
  }
  std::string q = s.substr(start);
  std::string op_name;
  if (op != std::string::npos) {
    op_name = q.substr(op - start);
    q.erase(op - start);
    if (ends_with(q, "::")) q.erase(q.size() - 2);
    // A conversion operator's type follows "operator ": keep it only when spelled alike.
    if (op_name.size() > 9 && op_name[8] == ' ' && is_ident(op_name[9]) &&
        op_name.rfind("operator new", 0) != 0 && op_name.rfind("operator delete", 0) != 0 &&
        !plain_args(op_name.substr(9)))
      op_name.erase(9);
  }
  replace_all(q, "(anonymous namespace)", "{anonymous}");
  std::vector<std::string> seg = q.empty() ? std::vector<std::string>{} : split_scopes(q);
  if (!op_name.empty()) seg.push_back(op_name);
  if (seg.empty()) return runtime_only(why, "no name");
  // A lambda: GCC prints "<lambda(int)>" inside "main()::"; start at the innermost one.
  for (size_t i = seg.size(); i-- > 0;) {
    const std::string& g = seg[i];
    if (g.rfind("{lambda(", 0) == 0) {
      const size_t close = g.rfind(")#");
      if (close == std::string::npos || !plain_args(g.substr(8, close - 8)))
        return runtime_only(why, "a lambda whose parameters GCC spells differently");
      seg[i] = "<lambda(" + g.substr(8, close - 8) + ")>";
      seg.erase(seg.begin(), seg.begin() + long(i));
      break;
    }
    if (!g.empty() && g[0] == '{' && g != "{anonymous}")
      return runtime_only(why, "an unnamed entity GCC names differently");
  }
  // Template arguments spelled differently: the last such scope decides what is left.
  const size_t n = seg.size();
  size_t bad = n;  // index of the last segment with such arguments
  for (size_t i = 0; i < n; ++i) {
    const std::string& g = seg[i];
    if (g.rfind("<lambda(", 0) == 0 || g.rfind("operator", 0) == 0) continue;
    const size_t lt = g.find('<');
    if (lt != std::string::npos && (g.back() != '>' || !plain_args(g.substr(lt + 1)))) bad = i;
  }
  std::string out;
  if (bad == n) {
    out = join(seg, 0, n);
  } else if (bad == n - 1) {
    // A function template: its name up to '<' ("ns::convert<"), all instantiations.
    bool before_ok = true;
    for (size_t i = 0; i + 1 < n; ++i)
      if (seg[i].find('<') != std::string::npos && !plain_args(seg[i])) before_ok = false;
    if (!before_ok) return runtime_only(why, "template arguments GCC spells differently");
    out = join(seg, 0, n - 1);
    out += (out.empty() ? "" : "::") + seg[n - 1].substr(0, seg[n - 1].find('<') + 1);
  } else if (n - bad - 1 >= 2) {
    out = "::" + join(seg, bad + 1, n);  // "::Inner::get": a class and its member
  } else {
    return runtime_only(why, "template arguments GCC spells differently");
  }
  if (out.find(',') != std::string::npos) return runtime_only(why, "contains a comma");
  return out;
}

GccExclusions gcc_exclusions(const Filter& filter, SourceLang lang) {
  GccExclusions x;
  auto add = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (int block = 0; block < 2; ++block) {
    const bool files = block == 0;
    const std::vector<Filter::Rule>& rules = files ? filter.file_rules() : filter.region_rules();
    size_t last_include = std::string::npos;
    for (size_t r = 0; r < rules.size(); ++r)
      if (rules[r].include) last_include = r;
    for (size_t r = 0; r < rules.size(); ++r) {
      for (const Filter::Pattern& p : rules[r].patterns) {
        GccEntry e;
        e.file_rule = files;
        e.include = rules[r].include;
        e.pattern = (p.mangled ? "MANGLED " : "") + p.text;
        if (e.include) {
          e.mapping = Mapping::kNotNeeded;
        } else if (last_include != std::string::npos && last_include > r) {
          e.why = "a later INCLUDE rule may take functions back (GCC has no include list)";
        } else {
          std::string lit;
          bool whole = false, at_end = false;
          const std::vector<Piece> t = tokenize(p.text);
          if (!substring_of(t, lit, whole, at_end)) {
            e.why = t.size() == 1 && t[0].tok == Tok::kStar
                        ? "matches everything (build without critpath's wrappers instead)"
                        : "wildcards GCC cannot express (only a leading or trailing '*')";
          } else if (files) {
            if (lit.find(',') != std::string::npos) e.why = "contains a comma";
            else e.gcc = lit;
          } else if (p.mangled) {
            if (!whole) {
              e.why = "GCC matches demangled names; a MANGLED pattern needs to be exact";
            } else {
              const std::string d = demangle(lit.c_str());
              e.gcc = gcc_function_name(d, lang, &e.why);
            }
          } else if (whole) {
            e.gcc = gcc_function_name(lit, lang, &e.why);
          } else if (!scope_chars_only(lit)) {
            e.why = "only identifier characters and '::' can be matched in part";
          } else {
            if (lang == SourceLang::kFortran) {
              const size_t m = lit.rfind("::");
              if (m != std::string::npos) lit.erase(0, m + 2);
              if (at_end && lit.size() > 1 && lit.back() == '_') lit.pop_back();
            }
            if (lit.empty() || lit == ":" || lit == "::") e.why = "too short";
            else e.gcc = lit;
          }
          if (!e.gcc.empty()) {
            e.mapping = Mapping::kMapped;
            add(files ? x.files : x.functions, e.gcc);
          }
        }
        x.entries.push_back(std::move(e));
      }
    }
  }
  return x;
}

std::vector<std::string> gcc_options(const GccExclusions& x) {
  std::vector<std::string> out;
  auto list = [](const char* opt, const std::vector<std::string>& v) {
    std::string s = opt;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s;
  };
  if (!x.functions.empty()) out.push_back(list("-finstrument-functions-exclude-function-list=", x.functions));
  if (!x.files.empty()) out.push_back(list("-finstrument-functions-exclude-file-list=", x.files));
  return out;
}

}  // namespace critpath::hooks
