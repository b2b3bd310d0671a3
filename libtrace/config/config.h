// critpath — libtrace/config/config.h
//
// The run's configuration: every CRITPATH_* environment variable, read once at MPI_Init.
// Before any hook runs, the data flow starts here:
//
//   environ --parse()--> Config + warning lines --set_current()--> current()
//                                   |                                  |
//                      printed by the runtime (rank 0)       read by runtime, buffer,
//                                                             clock, analyzer
//
// Everything is generated from one X-macro table, libtrace/config/flags.inc: the Config
// members and defaults (below), the parser and its warnings, describe() (the report's
// critpath.cfg) and docs/configuration.md (render_markdown(), via gen_config_doc.py).
//
// Error policy (style B6): a bad value or an unknown CRITPATH_* name never stops the run.
// parse() returns one `critpath:` warning line per problem and keeps the default. Nothing
// here throws or aborts; nothing is on the recording hot path.
//
// Self-contained: this module depends only on the C++ standard library.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace critpath::config {

// ---- The table, as data ------------------------------------------------------------------

// Value type of a flag. Append-only (new kinds get new values).
enum class Kind : uint8_t {
  kBool = 0,       // 1/0, true/false, yes/no, on/off (any case)          -> bool
  kSize = 1,       // bytes, 4096 | 512K | 64M | 64MiB | 1g (binary units) -> uint64_t
  kInt = 2,        // decimal integer within the row's limits              -> int
  kString = 3,     // anything; empty means the default                   -> std::string
  kChoice = 4,     // one of the row's words (any case), stored canonical -> std::string
  kFile = 5,       // path of a file that can be read (not a directory);  -> std::string
                   // empty means the default
  kClockSkew = 6,  // "<offset s>,<drift ppm>[,<jump s>]" (parse_clock_skew_value);
                   // empty means the default                          -> std::string
};

// One CRITPATH_FLAG row. All views point to static storage.
struct FlagInfo {
  std::string_view name;  // "CRITPATH_BUFFER_SIZE"
  Kind kind;
  std::string_view default_text;  // "64M"; "" for an empty String default
  std::string_view limits;        // "1M..", "-7..19", "auto|tsc|monotonic", ""
  std::string_view help;          // markdown, one line
};

// One CRITPATH_LAUNCHER_VAR row: known to scripts, ignored (silently) by the runtime.
struct LauncherVarInfo {
  std::string_view name;  // "CRITPATH_MPI"
  std::string_view help;
};

// The rows of flags.inc in table order. Never empty, static storage, thread-safe.
std::span<const FlagInfo> flags() noexcept;
std::span<const LauncherVarInfo> launcher_vars() noexcept;

// ---- Value parsing (constexpr so the table's defaults are checked at compile time) -------

// Why a value was rejected. kOk = accepted.
enum class ValueError : uint8_t {
  kOk = 0,
  kEmpty = 1,       // "" or only blanks (non-String flags)
  kSyntax = 2,      // not a bool / size / integer / listed word
  kNegative = 3,    // a size with a minus sign
  kOverflow = 4,    // does not fit in 64 bits
  kBelowMin = 5,    // parsed, but under the row's minimum
  kAboveMax = 6,    // parsed, but over the row's maximum
  kNoSuchFile = 7,  // File: nothing at that path
  kDirectory = 8,   // File: a directory
  kUnreadable = 9,  // File: a regular file that cannot be opened for reading
};

namespace detail {

constexpr char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Leading decimal digits of `s` as a magnitude. Returns the number of digits consumed;
// sets `overflow` (and stops accumulating) when the value exceeds 2^64-1.
constexpr size_t scan_digits(std::string_view s, uint64_t& value, bool& overflow) {
  value = 0;
  overflow = false;
  size_t i = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    const uint64_t d = uint64_t(s[i] - '0');
    if (value > (UINT64_MAX - d) / 10) overflow = true;
    if (!overflow) value = value * 10 + d;
  }
  return i;
}

// "", "B" -> 0; "K[B|iB]" -> 10, "M.." -> 20, "G.." -> 30, "T.." -> 40 (any case).
constexpr bool parse_size_unit(std::string_view unit, int& shift) {
  if (unit.empty() || iequals(unit, "b")) {
    shift = 0;
    return true;
  }
  switch (ascii_lower(unit[0])) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    case 't': shift = 40; break;
    default: return false;
  }
  const std::string_view rest = unit.substr(1);
  return rest.empty() || iequals(rest, "b") || iequals(rest, "ib");
}

}  // namespace detail

// Size in bytes: blanks around are ignored; an integer, optional blanks, an optional unit
// K/M/G/T (powers of 1024) optionally followed by B or iB, any case. "0" is accepted here
// (limits decide). On error `bytes` is unchanged.
constexpr ValueError parse_size_value(std::string_view text, uint64_t& bytes) {
  std::string_view s = detail::trim(text);
  if (s.empty()) return ValueError::kEmpty;
  const bool negative = s.front() == '-';
  if (negative) s.remove_prefix(1);
  uint64_t n = 0;
  bool overflow = false;
  const size_t digits = detail::scan_digits(s, n, overflow);
  if (digits == 0) return ValueError::kSyntax;
  int shift = 0;
  if (!detail::parse_size_unit(detail::trim(s.substr(digits)), shift)) return ValueError::kSyntax;
  if (negative) return ValueError::kNegative;
  if (overflow || (shift != 0 && n > (UINT64_MAX >> shift))) return ValueError::kOverflow;
  bytes = n << shift;
  return ValueError::kOk;
}

// The public size parser, for reuse (e.g. sizes in tool options). True and `bytes` set when
// `text` is a valid size as above; false (bytes unchanged) on anything else.
constexpr bool parse_size(std::string_view text, uint64_t& bytes) {
  return parse_size_value(text, bytes) == ValueError::kOk;
}

// Decimal integer with an optional '-', blanks around ignored. kOverflow outside int64_t.
constexpr ValueError parse_int_value(std::string_view text, int64_t& value) {
  std::string_view s = detail::trim(text);
  if (s.empty()) return ValueError::kEmpty;
  const bool negative = s.front() == '-';
  if (negative) s.remove_prefix(1);
  uint64_t n = 0;
  bool overflow = false;
  const size_t digits = detail::scan_digits(s, n, overflow);
  if (digits == 0 || digits != s.size()) return ValueError::kSyntax;
  const uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
  if (overflow || n > limit) return ValueError::kOverflow;
  value = negative ? int64_t(0 - n) : int64_t(n);
  return ValueError::kOk;
}

// 1/0, true/false, yes/no, on/off, any case, blanks around ignored.
constexpr ValueError parse_bool_value(std::string_view text, bool& value) {
  const std::string_view s = detail::trim(text);
  if (s.empty()) return ValueError::kEmpty;
  constexpr std::string_view kTrue[] = {"1", "true", "yes", "on"};
  constexpr std::string_view kFalse[] = {"0", "false", "no", "off"};
  for (std::string_view t : kTrue)
    if (detail::iequals(s, t)) return value = true, ValueError::kOk;
  for (std::string_view f : kFalse)
    if (detail::iequals(s, f)) return value = false, ValueError::kOk;
  return ValueError::kSyntax;
}

// One of the '|'-separated `words`, any case; `word` is set to the canonical spelling (a
// view into `words`). A list that holds both `false` and `true` takes every bool spelling
// for them as well (1/0, yes/no, on/off): a bool flag that grew more values
// (CRITPATH_KEEP_TRACE=otf2) keeps accepting what it accepted before.
constexpr ValueError parse_choice_value(std::string_view text, std::string_view words,
                                        std::string_view& word) {
  const std::string_view s = detail::trim(text);
  if (s.empty()) return ValueError::kEmpty;
  std::string_view rest = words, as_false, as_true;
  while (true) {
    const size_t bar = rest.find('|');
    const std::string_view w = rest.substr(0, bar);
    if (!w.empty() && detail::iequals(s, w)) return word = w, ValueError::kOk;
    if (w == "false") as_false = w;
    if (w == "true") as_true = w;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  bool b = false;
  if (!as_false.empty() && !as_true.empty() && parse_bool_value(s, b) == ValueError::kOk)
    return word = b ? as_true : as_false, ValueError::kOk;
  return ValueError::kSyntax;
}

// A CRITPATH_DEBUG_CLOCK_SKEW value: two or three comma-separated decimal numbers
// "<offset s>,<drift ppm>[,<jump s>]" (blanks around each ignored, no inf/nan), the offset
// and the jump within +-kMaxSkewSeconds, the drift within +-kMaxSkewPpm. Returns kEmpty,
// kSyntax (not that shape), kAboveMax (a number out of its range) or kOk with `skew` set
// (jump 0 when absent); on error `skew` is unchanged. Not constexpr (floating-point parsing).
struct ClockSkewValue {
  double offset_s = 0;
  double drift_ppm = 0;
  double jump_s = 0;
};
constexpr double kMaxSkewSeconds = 3600;
constexpr double kMaxSkewPpm = 10000;
ValueError parse_clock_skew_value(std::string_view text, ClockSkewValue& skew) noexcept;

// A CRITPATH_* file path (Kind::kFile): kOk when `path` names something that is not a
// directory and, if a regular file, can be opened for reading; kNoSuchFile, kDirectory or
// kUnreadable otherwise (kEmpty for ""). Looks at the file system; never throws.
ValueError check_file_value(std::string_view path) noexcept;

// A row's numeric limits "min..max" / "min.." / "..max" / "" in the flag's own syntax.
template <class T>
struct Range {
  T min;
  T max;
};

// Parses limits for Size (T = uint64_t) or Int (T = int64_t; the default range is int's).
// False when the limits text is malformed or min > max.
template <class T>
constexpr bool parse_range(std::string_view limits, Range<T>& range) {
  static_assert(std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t>);
  range = std::is_same_v<T, uint64_t> ? Range<T>{0, T(UINT64_MAX)} : Range<T>{T(INT_MIN), T(INT_MAX)};
  if (limits.empty()) return true;
  const size_t dots = limits.find("..");
  if (dots == std::string_view::npos) return false;
  const std::string_view lo = limits.substr(0, dots), hi = limits.substr(dots + 2);
  auto one = [](std::string_view t, T& out) {
    if constexpr (std::is_same_v<T, uint64_t>) return parse_size_value(t, out) == ValueError::kOk;
    else return parse_int_value(t, out) == ValueError::kOk;
  };
  if (!lo.empty() && !one(lo, range.min)) return false;
  if (!hi.empty() && !one(hi, range.max)) return false;
  return range.min <= range.max;
}

namespace detail {
// Deliberately not constexpr: reaching it while evaluating a flags.inc default makes the
// build fail, pointing at the offending row.
inline void invalid_default_in_flags_inc() {}

template <class T>
consteval T checked_number(std::string_view text, std::string_view limits) {
  Range<T> range{};
  T v{};
  ValueError e;
  if constexpr (std::is_same_v<T, uint64_t>) e = parse_size_value(text, v);
  else e = parse_int_value(text, v);
  if (!parse_range(limits, range) || e != ValueError::kOk || v < range.min || v > range.max)
    invalid_default_in_flags_inc();
  return v;
}
}  // namespace detail

// The Type column of flags.inc: member type, kind, and the compile-time default check.
namespace flag_type {
struct Bool {
  using value_type = bool;
  static constexpr Kind kKind = Kind::kBool;
  static consteval bool default_value(std::string_view text, std::string_view limits) {
    bool v = false;
    if (parse_bool_value(text, v) != ValueError::kOk || !limits.empty())
      detail::invalid_default_in_flags_inc();
    return v;
  }
};
struct Size {
  using value_type = uint64_t;
  static constexpr Kind kKind = Kind::kSize;
  static consteval uint64_t default_value(std::string_view text, std::string_view limits) {
    return detail::checked_number<uint64_t>(text, limits);
  }
};
struct Int {
  using value_type = int;
  static constexpr Kind kKind = Kind::kInt;
  static consteval int default_value(std::string_view text, std::string_view limits) {
    Range<int64_t> r{};
    if (!parse_range(limits, r) || r.min < INT_MIN || r.max > INT_MAX) detail::invalid_default_in_flags_inc();
    return int(detail::checked_number<int64_t>(text, limits));
  }
};
struct String {
  using value_type = std::string;
  static constexpr Kind kKind = Kind::kString;
  static consteval std::string_view default_value(std::string_view text, std::string_view limits) {
    if (!limits.empty()) detail::invalid_default_in_flags_inc();
    return text;
  }
};
// A file path or a clock skew: stored as given; the default must be empty (none).
template <Kind K>
struct CheckedText {
  using value_type = std::string;
  static constexpr Kind kKind = K;
  static consteval std::string_view default_value(std::string_view text, std::string_view limits) {
    if (!text.empty() || !limits.empty()) detail::invalid_default_in_flags_inc();
    return text;
  }
};
using File = CheckedText<Kind::kFile>;
using ClockSkew = CheckedText<Kind::kClockSkew>;
struct Choice {
  using value_type = std::string;
  static constexpr Kind kKind = Kind::kChoice;
  static consteval std::string_view default_value(std::string_view text, std::string_view limits) {
    std::string_view w;
    if (parse_choice_value(text, limits, w) != ValueError::kOk || w != text)
      detail::invalid_default_in_flags_inc();
    return w;
  }
};
}  // namespace flag_type

// ---- The configuration ----------------------------------------------------------------------

// One member per flags.inc row, named by its `member` column and initialised to its default:
//   enable, buffer_size, chunk_size, spill_dir, output_dir, compression_level,
//   compress_thread, timer ("auto" | "tsc" | "monotonic"), analysis, keep_trace,
//   dump_events, verbose, filter, autofilter_visits, autofilter_ns, callsite_depth,
//   papi_events.
// Sizes are bytes. A Choice member always holds one of its listed words, spelled as listed.
// Plain value type: copy freely; compare with ==.
struct Config {
#define CRITPATH_FLAG(Type, NAME, member, default_text, limits, help) \
  flag_type::Type::value_type member{flag_type::Type::default_value(default_text, limits)};
#include "libtrace/config/flags.inc"

  bool operator==(const Config&) const = default;
};

// Reads the configuration from an environ-style array (NAME=VALUE strings, ending with a
// null pointer; envp itself may be null). Only entries starting with "CRITPATH_" matter;
// the array is not modified and getenv is not called.
//
// Returns the configuration: defaults, overridden by every valid value. For each problem,
// appends exactly one line (no trailing newline) to `warnings`, in envp order:
//   critpath: CRITPATH_BUFFER_SIZE='abc' is not a size (e.g. 64M); using the default 64M
//   critpath: CRITPATH_COMPRESSION_LEVEL='42' is out of range -7..19; using the default 1
//   critpath: unknown variable CRITPATH_BUFER_SIZE='1G' ignored (did you mean CRITPATH_BUFFER_SIZE?)
// Problems: an invalid or empty value of a Bool, Size, Int or Choice flag, an invalid
// non-empty File or ClockSkew value (the default is kept), an unknown CRITPATH_* name. Launcher variables (CRITPATH_MPI) are accepted silently. If a name occurs
// twice, the first occurrence counts (as getenv) and the rest are ignored.
// Values quoted in warnings are sanitised (control bytes escaped, long values cut).
//
// Never throws: if memory runs out, returns the defaults. Thread-safe (no shared state).
Config parse(const char* const* envp, std::vector<std::string>& warnings) noexcept;

// The configuration of this run: the defaults until set_current() is called.
// The reference stays valid for the life of the process (the storage is never destroyed,
// so atexit handlers and late threads may read it).
const Config& current() noexcept;

// Installs the run's configuration. Called once by the runtime at MPI_Init, before recording
// starts and before any other thread reads current(); not safe concurrently with readers.
// If copying runs out of memory, the previous configuration stays in place.
void set_current(const Config& config) noexcept;

// The configuration as re-sourceable shell lines, one per flag in table order, each ending
// in '\n': "CRITPATH_ENABLE=true\nCRITPATH_BUFFER_SIZE=64M\n...". Sizes use the largest
// exact binary unit (format_size); strings made only of [A-Za-z0-9_./:@%+,=-] appear as is,
// others in single quotes (so `set -a; . critpath.cfg` restores them). For such plain
// values, parse() of the lines gives back `config` with no warnings.
// Returns "" if memory runs out.
std::string describe(const Config& config) noexcept;

// Bytes in the shortest exact form parse_size() accepts: 67108864 -> "64M", 1536 -> "1536",
// 0 -> "0". Returns "" if memory runs out.
std::string format_size(uint64_t bytes) noexcept;

// The complete docs/configuration.md, rendered from the table (intro, value syntax, the
// runtime variables, the build and launcher variables). Deterministic.
// Returns "" if memory runs out.
std::string render_markdown() noexcept;

}  // namespace critpath::config
