// critpath — libtrace/config/config.cpp
//
// The CRITPATH_* parser, warnings, describe() and the docs renderer, all expanded from
// flags.inc. Runs once at MPI_Init (and in tools/tests); nothing here is on a hot path, so
// std::string is fine, but nothing may throw out of it: every entry point catches and
// degrades to the defaults (style B6).
#include "libtrace/config/config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>
#include <utility>

namespace critpath::config {
namespace {

constexpr std::string_view kPrefix = "CRITPATH_";

constexpr FlagInfo kFlags[] = {
#define CRITPATH_FLAG(Type, NAME, member, default_text, limits, help) \
  {"CRITPATH_" #NAME, flag_type::Type::kKind, default_text, limits, help},
#include "libtrace/config/flags.inc"
};

constexpr LauncherVarInfo kLauncherVars[] = {
#define CRITPATH_LAUNCHER_VAR(NAME, help) {"CRITPATH_" #NAME, help},
#include "libtrace/config/flags.inc"
};

// Row indices, so per-member code can be generated as switch cases.
enum FlagIndex : size_t {
#define CRITPATH_FLAG(Type, NAME, member, default_text, limits, help) kFlag_##NAME,
#include "libtrace/config/flags.inc"
  kFlagCount
};
static_assert(kFlagCount == std::size(kFlags));

// Names must be unique across both tables and free of '=' (compile-time).
consteval bool names_are_unique() {
  std::array<std::string_view, std::size(kFlags) + std::size(kLauncherVars)> names{};
  size_t n = 0;
  for (const FlagInfo& f : kFlags) names[n++] = f.name;
  for (const LauncherVarInfo& v : kLauncherVars) names[n++] = v.name;
  for (size_t i = 0; i < n; ++i) {
    if (names[i].find('=') != std::string_view::npos) return false;
    for (size_t j = i + 1; j < n; ++j)
      if (names[i] == names[j]) return false;
  }
  return true;
}
static_assert(names_are_unique(), "flags.inc: duplicate CRITPATH_* name");

// ---- Parsed value, applied per member type -------------------------------------------------

struct Parsed {
  ValueError error = ValueError::kOk;
  bool b = false;
  uint64_t u = 0;
  int64_t i = 0;
  std::string_view text;  // String: the raw value; Choice: the canonical word
};

Parsed parse_value(const FlagInfo& f, std::string_view text) {
  Parsed p;
  switch (f.kind) {
    case Kind::kBool: p.error = parse_bool_value(text, p.b); break;
    case Kind::kSize: {
      Range<uint64_t> r{};
      parse_range(f.limits, r);  // validated at compile time
      p.error = parse_size_value(text, p.u);
      if (p.error == ValueError::kOk && p.u < r.min) p.error = ValueError::kBelowMin;
      if (p.error == ValueError::kOk && p.u > r.max) p.error = ValueError::kAboveMax;
      break;
    }
    case Kind::kInt: {
      Range<int64_t> r{};
      parse_range(f.limits, r);
      p.error = parse_int_value(text, p.i);
      // A value beyond int64 is simply out of the (int-bounded) range, on its sign's side.
      if (p.error == ValueError::kOverflow)
        p.error = detail::trim(text).starts_with('-') ? ValueError::kBelowMin : ValueError::kAboveMax;
      if (p.error == ValueError::kOk && p.i < r.min) p.error = ValueError::kBelowMin;
      if (p.error == ValueError::kOk && p.i > r.max) p.error = ValueError::kAboveMax;
      break;
    }
    case Kind::kString: p.text = text; break;
    case Kind::kChoice: p.error = parse_choice_value(text, f.limits, p.text); break;
    case Kind::kFile:
      p.error = check_file_value(text);
      p.text = text;
      break;
    case Kind::kClockSkew: {
      ClockSkewValue unused;
      p.error = parse_clock_skew_value(text, unused);
      p.text = text;
      break;
    }
  }
  return p;
}

// The kinds whose empty value means "the default" rather than an error.
bool empty_is_default(Kind k) { return k == Kind::kString || k == Kind::kFile || k == Kind::kClockSkew; }

void store(bool& m, const Parsed& p) { m = p.b; }
void store(uint64_t& m, const Parsed& p) { m = p.u; }
void store(int& m, const Parsed& p) { m = static_cast<int>(p.i); }  // range-checked
void store(std::string& m, const Parsed& p) { m.assign(p.text); }

void store_flag(Config& cfg, size_t index, const Parsed& p) {
  switch (index) {
#define CRITPATH_FLAG(Type, NAME, member, default_text, limits, help) \
  case kFlag_##NAME:                                                  \
    store(cfg.member, p);                                             \
    break;
#include "libtrace/config/flags.inc"
    default: break;
  }
}

// ---- Warning text ----------------------------------------------------------------------------

// Appends `s` so that the warning stays one readable line: control bytes become \xNN, and
// anything past 64 bytes becomes "...".
void append_sanitized(std::string& out, std::string_view s) {
  constexpr size_t kMax = 64;
  const bool cut = s.size() > kMax;
  if (cut) s = s.substr(0, kMax);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  if (cut) out += "...";
}

std::string_view default_for_display(const FlagInfo& f) {
  return f.default_text.empty() ? std::string_view("(empty)") : f.default_text;
}

constexpr std::string_view kClockSkewShape = "<offset s>,<drift ppm>[,<jump s>]";

// Appends " <why>" for a rejected value, e.g. " is out of range -7..19".
void append_reason(std::string& out, const FlagInfo& f, ValueError e) {
  const size_t dots = f.limits.find("..");
  const std::string_view lo = dots == std::string_view::npos ? "" : f.limits.substr(0, dots);
  const std::string_view hi = dots == std::string_view::npos ? "" : f.limits.substr(dots + 2);
  // A one-sided limit names the side the value is on; the open side is the type's own bound
  // (only an int's can be crossed: a size past 64 bits is kOverflow).
  auto range_text = [&](bool below) -> std::string {
    if (f.kind == Kind::kInt && f.limits.empty()) return "is out of range for an int";
    if (f.kind == Kind::kClockSkew)
      return "is out of range (offset and jump within +-" + std::to_string(int(kMaxSkewSeconds)) +
             " s, drift within +-" + std::to_string(int(kMaxSkewPpm)) + " ppm)";
    if (!lo.empty() && !hi.empty()) return "is out of range " + std::string(f.limits);
    if (below) return "is below the minimum " + (lo.empty() ? std::to_string(INT_MIN) : std::string(lo));
    return "is above the maximum " + (hi.empty() ? std::to_string(INT_MAX) : std::string(hi));
  };
  out += ' ';
  switch (e) {
    case ValueError::kOk: break;
    case ValueError::kEmpty: out += "is empty"; break;
    case ValueError::kSyntax:
      switch (f.kind) {
        case Kind::kBool: out += "is not a boolean (1/0, true/false, yes/no, on/off)"; break;
        case Kind::kSize:
          out += "is not a size (e.g. ";
          out += f.default_text;
          out += ')';
          break;
        case Kind::kInt: out += "is not an integer"; break;
        case Kind::kChoice:
          out += "is not one of ";
          out += f.limits;
          break;
        case Kind::kString:
        case Kind::kFile: out += "is invalid"; break;
        case Kind::kClockSkew:
          out += "is not ";
          out += kClockSkewShape;
          out += " (e.g. 0.005,100)";
          break;
      }
      break;
    case ValueError::kNegative:
      out += "is negative, not a size (e.g. ";
      out += f.default_text;
      out += ')';
      break;
    case ValueError::kOverflow: out += "is too large (over 64 bits)"; break;
    case ValueError::kBelowMin:
    case ValueError::kAboveMax: out += range_text(e == ValueError::kBelowMin); break;
    case ValueError::kNoSuchFile: out += "does not exist"; break;
    case ValueError::kDirectory: out += "is a directory, not a file"; break;
    case ValueError::kUnreadable: out += "cannot be read"; break;
  }
}

// ---- "did you mean" ------------------------------------------------------------------------

// Optimal-string-alignment distance (edits: insert, delete, substitute, swap neighbours),
// ignoring case. Names are short, so the O(n*m) table is cheap.
size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const bool same = detail::ascii_lower(a[i - 1]) == detail::ascii_lower(b[j - 1]);
      size_t d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && detail::ascii_lower(a[i - 1]) == detail::ascii_lower(b[j - 2]) &&
          detail::ascii_lower(a[i - 2]) == detail::ascii_lower(b[j - 1]))
        d = std::min(d, prev2[j - 2] + 1);
      cur[j] = d;
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

// The known name closest to `name` (both with the prefix), or "" if none is close: up to 1
// edit for short names, 2 for names of 8+ characters after the prefix.
std::string_view suggest(std::string_view name) {
  if (name.size() > 96) return {};
  const std::string_view suffix = name.substr(kPrefix.size());
  std::string_view best;
  size_t best_d = SIZE_MAX;
  auto consider = [&](std::string_view known) {
    const std::string_view k = known.substr(kPrefix.size());
    const size_t allowed = k.size() >= 8 ? 2 : 1;
    const size_t d = edit_distance(suffix, k);
    if (d <= allowed && d < best_d) best_d = d, best = known;
  };
  for (const FlagInfo& f : kFlags) consider(f.name);
  for (const LauncherVarInfo& v : kLauncherVars) consider(v.name);
  return best;
}

// ---- describe() helpers --------------------------------------------------------------------

bool is_shell_safe(std::string_view s) {
  for (const char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || detail::is_digit(c) ||
                    std::string_view("_./:@%+,=-").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

void append_value(std::string& out, bool v) { out += v ? "true" : "false"; }
void append_value(std::string& out, uint64_t v) { out += format_size(v); }
void append_value(std::string& out, int v) {
  char buf[16];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
void append_value(std::string& out, const std::string& v) {
  if (is_shell_safe(v)) {
    out += v;
    return;
  }
  out += '\'';
  for (const char c : v) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
}

// Raw storage for current(): constructed on first use, never destroyed.
alignas(Config) unsigned char g_storage[sizeof(Config)];

Config& storage() {
  static Config* const cfg = new (g_storage) Config();
  return *cfg;
}

// ---- Markdown --------------------------------------------------------------------------------

// Table cells: '|' would end the cell.
void append_cell(std::string& out, std::string_view s) {
  for (const char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
}

void append_type_cell(std::string& out, const FlagInfo& f) {
  const size_t dots = f.limits.find("..");
  auto append_limits = [&] {
    const std::string_view lo = f.limits.substr(0, dots), hi = f.limits.substr(dots + 2);
    if (!lo.empty() && !hi.empty()) {
      out += ", ";
      out += f.limits;
    } else if (!lo.empty()) {
      out += ", min ";
      out += lo;
    } else if (!hi.empty()) {
      out += ", max ";
      out += hi;
    }
  };
  switch (f.kind) {
    case Kind::kBool: out += "bool"; break;
    case Kind::kSize:
      out += "size";
      if (dots != std::string_view::npos) append_limits();
      break;
    case Kind::kInt:
      out += "int";
      if (dots != std::string_view::npos) append_limits();
      break;
    case Kind::kString: out += "string"; break;
    case Kind::kFile: out += "file"; break;
    case Kind::kClockSkew: out += "clock skew"; break;
    case Kind::kChoice: {
      out += "one of ";
      std::string_view words = f.limits;
      bool first = true;
      while (true) {
        const size_t bar = words.find('|');
        if (!first) out += ", ";
        first = false;
        out += '`';
        out += words.substr(0, bar);
        out += '`';
        if (bar == std::string_view::npos) break;
        words.remove_prefix(bar + 1);
      }
      break;
    }
  }
}

constexpr std::string_view kDocIntro =
    "<!-- Generated from libtrace/config/flags.inc by libtrace/config/gen_config_doc.py. "
    "Do not edit: change flags.inc and rerun the script. -->\n"
    "# Configuration\n"
    "\n"
    "critpath is configured only through `CRITPATH_*` environment variables.\n"
    "\n"
    "- They are read **once, at `MPI_Init`**. Changing them later in the run has no effect.\n"
    "- An invalid value (`CRITPATH_BUFFER_SIZE=abc`, `-5`, `1Q`, out of range, empty, ...)\n"
    "  produces one warning on rank 0, prefixed `critpath:`, that names the variable, the\n"
    "  value and the default used instead. The application always runs on.\n"
    "- An unknown `CRITPATH_*` name produces one warning as well, with a suggestion when it\n"
    "  is close to a known name (`did you mean CRITPATH_BUFFER_SIZE?`).\n"
    "- `CRITPATH_ENABLE=0` makes the library a pure pass-through: nothing is recorded and no\n"
    "  files are written.\n"
    "- The effective configuration is saved as `critpath.cfg` in the report directory, one\n"
    "  `CRITPATH_NAME=value` line per variable; `set -a; . ./critpath.cfg; set +a` restores\n"
    "  it for another run.\n"
    "\n"
    "## Value syntax\n"
    "\n"
    "| Type | Accepted values |\n"
    "|---|---|\n"
    "| bool | `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`, in any case |\n"
    "| size | bytes: an integer with an optional unit `K`, `M`, `G` or `T` (powers of 1024), "
    "optionally followed by `B` or `iB`, in any case: `4096`, `512K`, `64M`, `64MiB`, `64MB`, "
    "`1g`. No fractions, no negative values |\n"
    "| int | a decimal integer |\n"
    "| one of | one of the listed words, in any case; where `false` and `true` are listed, "
    "every bool spelling for them as well |\n"
    "| string | any text; empty means the default |\n"
    "| file | the path of a file that can be read, not a directory; empty means the default |\n"
    "| clock skew | `<offset s>,<drift ppm>[,<jump s>]`: two or three decimal numbers, the "
    "offset and the jump within ±3600 s, the drift within ±10000 ppm; empty means the "
    "default |\n"
    "\n"
    "Blanks around a value are ignored, except in strings and files. An empty value is\n"
    "invalid, except for strings, files and clock skews. Limits (`min`, `max`, `a..b`) are\n"
    "inclusive.\n"
    "\n"
    "## Runtime variables\n"
    "\n"
    "| Variable | Type | Default | Meaning |\n"
    "|---|---|---|---|\n";

constexpr std::string_view kDocLauncherIntro =
    "\n"
    "## Build and launcher variables\n"
    "\n"
    "Read by the build and launcher scripts, not by the runtime: the runtime accepts them\n"
    "without a warning and ignores them.\n"
    "\n"
    "| Variable | Meaning |\n"
    "|---|---|\n";

}  // namespace

ValueError parse_clock_skew_value(std::string_view text, ClockSkewValue& skew) noexcept {
  std::string_view rest = detail::trim(text);
  if (rest.empty()) return ValueError::kEmpty;
  double v[3] = {0, 0, 0};
  size_t n = 0;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = detail::trim(rest.substr(0, comma));
    if (n == 3 || item.empty()) return ValueError::kSyntax;
    // from_chars: plain decimal or exponent notation, no leading '+', no hex floats.
    const auto r = std::from_chars(item.data(), item.data() + item.size(), v[n], std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) return ValueError::kAboveMax;
    if (r.ec != std::errc() || r.ptr != item.data() + item.size() || !std::isfinite(v[n]))
      return ValueError::kSyntax;
    ++n;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (n < 2) return ValueError::kSyntax;
  if (std::fabs(v[0]) > kMaxSkewSeconds || std::fabs(v[1]) > kMaxSkewPpm || std::fabs(v[2]) > kMaxSkewSeconds)
    return ValueError::kAboveMax;
  skew = ClockSkewValue{v[0], v[1], v[2]};
  return ValueError::kOk;
}

ValueError check_file_value(std::string_view path) noexcept {
  try {
    if (path.empty()) return ValueError::kEmpty;
    const std::filesystem::path p(path);
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(st)) return ValueError::kNoSuchFile;
    if (std::filesystem::is_directory(st)) return ValueError::kDirectory;
    // A pipe or device may be read only once, or block: only regular files are opened.
    if (std::filesystem::is_regular_file(st) && !std::ifstream(p).is_open()) return ValueError::kUnreadable;
    return ValueError::kOk;
  } catch (...) {
    return ValueError::kUnreadable;
  }
}

std::span<const FlagInfo> flags() noexcept { return kFlags; }
std::span<const LauncherVarInfo> launcher_vars() noexcept { return kLauncherVars; }

Config parse(const char* const* envp, std::vector<std::string>& warnings) noexcept {
  try {
    Config cfg;
    std::array<bool, kFlagCount> seen{};
    for (const char* const* e = envp; e != nullptr && *e != nullptr; ++e) {
      const std::string_view entry(*e);
      if (!entry.starts_with(kPrefix)) continue;
      const size_t eq = entry.find('=');
      if (eq == std::string_view::npos) continue;  // not NAME=VALUE: not a variable
      const std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);

      size_t index = kFlagCount;
      for (size_t i = 0; i < kFlagCount; ++i)
        if (kFlags[i].name == name) index = i;
      if (index == kFlagCount) {
        bool launcher = false;
        for (const LauncherVarInfo& v : kLauncherVars) launcher |= v.name == name;
        if (launcher) continue;
        std::string w = "critpath: unknown variable ";
        append_sanitized(w, name);
        w += "='";
        append_sanitized(w, value);
        w += "' ignored";
        const std::string_view near = suggest(name);
        if (!near.empty()) {
          w += " (did you mean ";
          w += near;
          w += "?)";
        }
        warnings.push_back(std::move(w));
        continue;
      }
      if (seen[index]) continue;  // getenv semantics: the first occurrence wins
      seen[index] = true;

      const FlagInfo& f = kFlags[index];
      if (empty_is_default(f.kind) && value.empty()) continue;
      const Parsed p = parse_value(f, value);
      if (p.error == ValueError::kOk) {
        store_flag(cfg, index, p);
        continue;
      }
      std::string w = "critpath: ";
      w += f.name;
      w += "='";
      append_sanitized(w, value);
      w += '\'';
      append_reason(w, f, p.error);
      w += "; using the default ";
      w += default_for_display(f);
      warnings.push_back(std::move(w));
    }
    return cfg;
  } catch (...) {
    return Config();
  }
}

const Config& current() noexcept { return storage(); }

void set_current(const Config& config) noexcept {
  try {
    Config copy(config);          // may throw: the installed config is untouched then
    storage() = std::move(copy);  // noexcept
  } catch (...) {
  }
}

std::string format_size(uint64_t bytes) noexcept {
  try {
    static constexpr char kUnits[] = {'T', 'G', 'M', 'K'};
    int shift = 40;
    for (const char unit : kUnits) {
      const uint64_t mask = (uint64_t(1) << shift) - 1;
      if (bytes != 0 && (bytes & mask) == 0) {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf - 1, bytes >> shift);
        *r.ptr++ = unit;
        return std::string(buf, r.ptr);
      }
      shift -= 10;
    }
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, bytes);
    return std::string(buf, r.ptr);
  } catch (...) {
    return std::string();
  }
}

std::string describe(const Config& config) noexcept {
  try {
    std::string out;
#define CRITPATH_FLAG(Type, NAME, member, default_text, limits, help) \
  out += kFlags[kFlag_##NAME].name;                                   \
  out += '=';                                                         \
  append_value(out, config.member);                                   \
  out += '\n';
#include "libtrace/config/flags.inc"
    return out;
  } catch (...) {
    return std::string();
  }
}

std::string render_markdown() noexcept {
  try {
    std::string out(kDocIntro);
    for (const FlagInfo& f : kFlags) {
      out += "| `";
      out += f.name;
      out += "` | ";
      append_type_cell(out, f);
      out += " | ";
      if (f.default_text.empty()) {
        out += "*empty*";
      } else {
        out += '`';
        out += f.default_text;
        out += '`';
      }
      out += " | ";
      append_cell(out, f.help);
      out += " |\n";
    }
    out += kDocLauncherIntro;
    for (const LauncherVarInfo& v : kLauncherVars) {
      out += "| `";
      out += v.name;
      out += "` | ";
      append_cell(out, v.help);
      out += " |\n";
    }
    return out;
  } catch (...) {
    return std::string();
  }
}

}  // namespace critpath::config
