// critpath — tests/unit/config/config_test.cpp
//
// Unit tests for libtrace/config: the value parsers, parse() over environ-style arrays and
// its warning lines (one per problem, defaults kept), describe() round trips (also through a
// real `sh`), current()/set_current(), and that docs/configuration.md matches the table.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "libtrace/config/config.h"

namespace cfg = critpath::config;

// Failed comparisons print the configuration as its critpath.cfg lines.
namespace Catch {
template <>
struct StringMaker<cfg::Config> {
  static std::string convert(const cfg::Config& c) { return "\n" + cfg::describe(c); }
};
}  // namespace Catch

namespace {

constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

// parse() over a null-terminated copy of `env`.
cfg::Config parse_env(std::initializer_list<std::string> env, std::vector<std::string>& warnings) {
  std::vector<const char*> envp;
  for (const std::string& e : env) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  return cfg::parse(envp.data(), warnings);
}

// Splits describe() output into NAME=VALUE strings (no shell unquoting).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

cfg::Config parse_lines(const std::vector<std::string>& lines, std::vector<std::string>& warnings) {
  std::vector<const char*> envp;
  for (const std::string& l : lines) envp.push_back(l.c_str());
  envp.push_back(nullptr);
  return cfg::parse(envp.data(), warnings);
}

// A configuration with every member away from its default.
cfg::Config all_changed() {
  cfg::Config c;
  c.enable = false;
  c.buffer_size = 3 * kGiB;
  c.chunk_size = 4608;  // not a multiple of 1 KiB: printed as plain bytes
  c.spill_dir = "/scratch/spill";
  c.output_dir = "out/run-1";
  c.compression_level = -7;
  c.compress_thread = false;
  c.timer = "monotonic";
  c.analysis = false;
  c.keep_trace = "otf2";
  c.dump_events = true;
  c.verbose = 4;
  return c;
}

// Single-warning check: exactly one line, the default kept.
void expect_one_warning(const std::string& entry, const std::string& expected) {
  std::vector<std::string> w;
  const cfg::Config c = parse_env({entry}, w);
  INFO("entry: " << entry);
  REQUIRE(w.size() == 1);
  CHECK(w[0] == expected);
  CHECK(w[0].find('\n') == std::string::npos);
  CHECK(c == cfg::Config{});
}

}  // namespace

TEST_CASE("defaults follow the table", "[config]") {
  const cfg::Config c;
  CHECK(c.enable);
  CHECK(c.buffer_size == 64 * kMiB);
  CHECK(c.chunk_size == 256 * kKiB);
  CHECK(c.spill_dir.empty());
  CHECK(c.output_dir.empty());
  CHECK(c.compression_level == 1);
  CHECK(c.compress_thread);
  CHECK(c.timer == "auto");
  CHECK(c.analysis);
  CHECK(c.keep_trace == "false");
  CHECK_FALSE(c.dump_events);
  CHECK(c.verbose == 1);

  // Every row's default text is canonical: describe(defaults) reproduces the table.
  std::string expected;
  for (const cfg::FlagInfo& f : cfg::flags()) {
    CHECK(f.name.starts_with("CRITPATH_"));
    CHECK_FALSE(f.help.empty());
    expected += std::string(f.name) + "=" + std::string(f.default_text) + "\n";
  }
  CHECK(cfg::describe(c) == expected);
  REQUIRE(cfg::launcher_vars().size() >= 1);
  CHECK(cfg::launcher_vars()[0].name == "CRITPATH_MPI");
}

TEST_CASE("parse_size accepts plain bytes and binary units", "[config]") {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  // clang-format off
  const Case cases[] = {
      {"4096", 4096},          {"0", 0},
      {"1B", 1},               {"512K", 512 * kKiB},
      {"512k", 512 * kKiB},    {"512KiB", 512 * kKiB},
      {"64M", 64 * kMiB},      {"64m", 64 * kMiB},
      {"64MiB", 64 * kMiB},    {"64MB", 64 * kMiB},
      {"64mib", 64 * kMiB},    {"64mb", 64 * kMiB},
      {"1g", kGiB},            {"1G", kGiB},
      {"2GiB", 2 * kGiB},      {"1T", kTiB},
      {"16777215T", 16777215 * kTiB},
      {" 64M ", 64 * kMiB},    {"64 MiB", 64 * kMiB},
      {"18446744073709551615", UINT64_MAX},
  };
  // clang-format on
  for (const Case& c : cases) {
    INFO("text: '" << c.text << "'");
    uint64_t v = 7;
    CHECK(cfg::parse_size(c.text, v));
    CHECK(v == c.bytes);
  }
  // Usable at compile time (the table's defaults are checked this way).
  static_assert([] {
    uint64_t v = 0;
    return cfg::parse_size("64MiB", v) && v == 64 * kMiB;
  }());
}

TEST_CASE("parse_size rejects garbage, negatives and overflow", "[config]") {
  using E = cfg::ValueError;
  struct Case {
    const char* text;
    E error;
  };
  // clang-format off
  const Case cases[] = {
      {"", E::kEmpty},          {"   ", E::kEmpty},
      {"abc", E::kSyntax},      {"1Q", E::kSyntax},
      {"M", E::kSyntax},        {"1.5M", E::kSyntax},
      {"64MiBs", E::kSyntax},   {"64iB", E::kSyntax},
      {"0x10", E::kSyntax},     {"+5", E::kSyntax},
      {"1 2", E::kSyntax},      {"-abc", E::kSyntax},
      {"-5", E::kNegative},     {"-1M", E::kNegative},
      {"99999999999T", E::kOverflow},
      {"16777216T", E::kOverflow},
      {"17179869184G", E::kOverflow},
      {"18446744073709551616", E::kOverflow},
      {"99999999999999999999999999", E::kOverflow},
  };
  // clang-format on
  for (const Case& c : cases) {
    INFO("text: '" << c.text << "'");
    uint64_t v = 7;
    CHECK(cfg::parse_size_value(c.text, v) == c.error);
    CHECK_FALSE(cfg::parse_size(c.text, v));
    CHECK(v == 7);  // untouched on error
  }
}

TEST_CASE("bool, int and choice value parsers", "[config]") {
  using E = cfg::ValueError;
  for (const char* t : {"1", "true", "TRUE", "True", "yes", "YES", "on", "On", " on "}) {
    bool b = false;
    INFO(t);
    CHECK(cfg::parse_bool_value(t, b) == E::kOk);
    CHECK(b);
  }
  for (const char* t : {"0", "false", "FALSE", "no", "No", "off", "OFF"}) {
    bool b = true;
    INFO(t);
    CHECK(cfg::parse_bool_value(t, b) == E::kOk);
    CHECK_FALSE(b);
  }
  for (const char* t : {"2", "maybe", "y", "n", "tru", "onn", "-1"}) {
    bool b = true;
    INFO(t);
    CHECK(cfg::parse_bool_value(t, b) == E::kSyntax);
  }
  bool b = true;
  CHECK(cfg::parse_bool_value("", b) == E::kEmpty);

  int64_t i = 0;
  CHECK((cfg::parse_int_value("-7", i) == E::kOk && i == -7));
  CHECK((cfg::parse_int_value(" 19 ", i) == E::kOk && i == 19));
  CHECK((cfg::parse_int_value("-9223372036854775808", i) == E::kOk && i == INT64_MIN));
  CHECK(cfg::parse_int_value("9223372036854775808", i) == E::kOverflow);
  CHECK(cfg::parse_int_value("1.5", i) == E::kSyntax);
  CHECK(cfg::parse_int_value("1K", i) == E::kSyntax);
  CHECK(cfg::parse_int_value("-", i) == E::kSyntax);

  std::string_view word;
  CHECK((cfg::parse_choice_value("TSC", "auto|tsc|monotonic", word) == E::kOk && word == "tsc"));
  CHECK((cfg::parse_choice_value("monotonic", "auto|tsc|monotonic", word) == E::kOk && word == "monotonic"));
  CHECK(cfg::parse_choice_value("mono", "auto|tsc|monotonic", word) == E::kSyntax);
  CHECK(cfg::parse_choice_value("auto|tsc", "auto|tsc|monotonic", word) == E::kSyntax);
}

TEST_CASE("valid values are applied without warnings", "[config]") {
  std::vector<std::string> w;
  const cfg::Config c = parse_env(
      {"PATH=/usr/bin", "CRITPATH_ENABLE=off", "CRITPATH_BUFFER_SIZE=1g", "CRITPATH_CHUNK_SIZE=4096",
       "CRITPATH_SPILL_DIR=/tmp/a b", "CRITPATH_OUTPUT_DIR=out", "CRITPATH_COMPRESSION_LEVEL=-7",
       "CRITPATH_COMPRESS_THREAD=No", "CRITPATH_TIMER=TSC", "CRITPATH_ANALYSIS=0", "CRITPATH_KEEP_TRACE=yes",
       "CRITPATH_DUMP_EVENTS=TRUE", "CRITPATH_VERBOSE=4", "CRITPATH_MPI=openmpi", "CRITPATHX_FOO=1",
       "critpath_enable=0"},
      w);
  CHECK(w.empty());
  CHECK_FALSE(c.enable);
  CHECK(c.buffer_size == kGiB);
  CHECK(c.chunk_size == 4096);
  CHECK(c.spill_dir == "/tmp/a b");
  CHECK(c.output_dir == "out");
  CHECK(c.compression_level == -7);
  CHECK_FALSE(c.compress_thread);
  CHECK(c.timer == "tsc");
  CHECK_FALSE(c.analysis);
  CHECK(c.keep_trace == "true");  // "yes": a bool spelling of a listed word
  CHECK(c.dump_events);
  CHECK(c.verbose == 4);

  // Range ends are inclusive.
  w.clear();
  const cfg::Config edges = parse_env({"CRITPATH_BUFFER_SIZE=1MiB", "CRITPATH_CHUNK_SIZE=64M",
                                       "CRITPATH_COMPRESSION_LEVEL=19", "CRITPATH_VERBOSE=0"},
                                      w);
  CHECK(w.empty());
  CHECK(edges.buffer_size == kMiB);
  CHECK(edges.chunk_size == 64 * kMiB);
  CHECK(edges.compression_level == 19);
  CHECK(edges.verbose == 0);
}

TEST_CASE("each invalid value gives exactly one warning and keeps the default", "[config]") {
  expect_one_warning("CRITPATH_BUFFER_SIZE=abc",
                     "critpath: CRITPATH_BUFFER_SIZE='abc' is not a size (e.g. 64M); using the "
                     "default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=1Q",
                     "critpath: CRITPATH_BUFFER_SIZE='1Q' is not a size (e.g. 64M); using the "
                     "default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=-5",
                     "critpath: CRITPATH_BUFFER_SIZE='-5' is negative, not a size (e.g. 64M); "
                     "using the default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=0",
                     "critpath: CRITPATH_BUFFER_SIZE='0' is below the minimum 1M; using the "
                     "default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=1023K",
                     "critpath: CRITPATH_BUFFER_SIZE='1023K' is below the minimum 1M; using the "
                     "default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=99999999999T",
                     "critpath: CRITPATH_BUFFER_SIZE='99999999999T' is too large (over 64 bits); "
                     "using the default 64M");
  expect_one_warning("CRITPATH_BUFFER_SIZE=",
                     "critpath: CRITPATH_BUFFER_SIZE='' is empty; using the default 64M");
  expect_one_warning("CRITPATH_CHUNK_SIZE=128M",
                     "critpath: CRITPATH_CHUNK_SIZE='128M' is out of range 4K..64M; using the "
                     "default 256K");
  expect_one_warning("CRITPATH_CHUNK_SIZE=1K",
                     "critpath: CRITPATH_CHUNK_SIZE='1K' is out of range 4K..64M; using the "
                     "default 256K");
  expect_one_warning("CRITPATH_COMPRESSION_LEVEL=42",
                     "critpath: CRITPATH_COMPRESSION_LEVEL='42' is out of range -7..19; using the "
                     "default 1");
  expect_one_warning("CRITPATH_COMPRESSION_LEVEL=-8",
                     "critpath: CRITPATH_COMPRESSION_LEVEL='-8' is out of range -7..19; using the "
                     "default 1");
  expect_one_warning("CRITPATH_COMPRESSION_LEVEL=99999999999999999999",
                     "critpath: CRITPATH_COMPRESSION_LEVEL='99999999999999999999' is out of range "
                     "-7..19; using the default 1");
  expect_one_warning("CRITPATH_COMPRESSION_LEVEL=fast",
                     "critpath: CRITPATH_COMPRESSION_LEVEL='fast' is not an integer; using the "
                     "default 1");
  expect_one_warning("CRITPATH_VERBOSE=5",
                     "critpath: CRITPATH_VERBOSE='5' is out of range 0..4; using the default 1");
  expect_one_warning("CRITPATH_ENABLE=maybe",
                     "critpath: CRITPATH_ENABLE='maybe' is not a boolean (1/0, true/false, "
                     "yes/no, on/off); using the default true");
  expect_one_warning("CRITPATH_KEEP_TRACE=",
                     "critpath: CRITPATH_KEEP_TRACE='' is empty; using the default false");
  expect_one_warning("CRITPATH_TIMER=rdtsc",
                     "critpath: CRITPATH_TIMER='rdtsc' is not one of auto|tsc|monotonic; using "
                     "the default auto");
  expect_one_warning("CRITPATH_KEEP_TRACE=scorep",
                     "critpath: CRITPATH_KEEP_TRACE='scorep' is not one of false|true|otf2|both; "
                     "using the default false");
}

TEST_CASE("a choice listing false and true takes every bool spelling for them", "[config]") {
  std::vector<std::string> w;
  for (const char* v : {"1", "on", "YES", "True"})
    CHECK(parse_env({std::string("CRITPATH_KEEP_TRACE=") + v}, w).keep_trace == "true");
  for (const char* v : {"0", "off", "no", "FALSE"})
    CHECK(parse_env({std::string("CRITPATH_KEEP_TRACE=") + v}, w).keep_trace == "false");
  CHECK(parse_env({"CRITPATH_KEEP_TRACE=OTF2"}, w).keep_trace == "otf2");
  CHECK(parse_env({"CRITPATH_KEEP_TRACE= both "}, w).keep_trace == "both");
  CHECK(w.empty());
  // Without both words listed, bool spellings stay invalid.
  std::string_view word;
  CHECK(cfg::parse_choice_value("1", "auto|tsc|monotonic", word) == cfg::ValueError::kSyntax);
  CHECK(cfg::parse_choice_value("yes", "true|otf2", word) == cfg::ValueError::kSyntax);
}

TEST_CASE("a number past int64 is out of range on its own side", "[config]") {
  // "1.." has no upper limit of its own: the int's bound is named, never "below the minimum".
  expect_one_warning("CRITPATH_AUTOFILTER_VISITS=99999999999999999999999",
                     "critpath: CRITPATH_AUTOFILTER_VISITS='99999999999999999999999' is above "
                     "the maximum 2147483647; using the default 100000");
  expect_one_warning("CRITPATH_AUTOFILTER_VISITS=3000000000",
                     "critpath: CRITPATH_AUTOFILTER_VISITS='3000000000' is above the maximum "
                     "2147483647; using the default 100000");
  expect_one_warning("CRITPATH_AUTOFILTER_VISITS=-99999999999999999999999",
                     "critpath: CRITPATH_AUTOFILTER_VISITS='-99999999999999999999999' is below "
                     "the minimum 1; using the default 100000");
  expect_one_warning("CRITPATH_AUTOFILTER_VISITS=0",
                     "critpath: CRITPATH_AUTOFILTER_VISITS='0' is below the minimum 1; using the "
                     "default 100000");
}

TEST_CASE("file values must name a readable file, not a directory", "[config]") {
  expect_one_warning("CRITPATH_FILTER=/tmp",
                     "critpath: CRITPATH_FILTER='/tmp' is a directory, not a file; using the "
                     "default (empty)");
  expect_one_warning("CRITPATH_FILTER=/nonexistent/critpath.filter",
                     "critpath: CRITPATH_FILTER='/nonexistent/critpath.filter' does not exist; "
                     "using the default (empty)");
  char path[] = "/tmp/critpath-config-test-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::vector<std::string> w;
  const cfg::Config c = parse_env({std::string("CRITPATH_FILTER=") + path, "CRITPATH_FILTER_X=1"}, w);
  CHECK(c.filter == path);
  REQUIRE(w.size() == 1);  // only the unknown name
  CHECK(w[0].find("CRITPATH_FILTER_X") != std::string::npos);
  std::remove(path);
  w.clear();
  CHECK(parse_env({"CRITPATH_FILTER="}, w) == cfg::Config{});  // empty: the default, no warning
  CHECK(w.empty());
  CHECK(cfg::check_file_value("") == cfg::ValueError::kEmpty);
}

TEST_CASE("clock skews: two or three bounded decimal numbers", "[config]") {
  const std::string shape =
      "is not <offset s>,<drift ppm>[,<jump s>] (e.g. 0.005,100); using the default (empty)";
  const std::string range =
      "is out of range (offset and jump within +-3600 s, drift within +-10000 ppm); using the "
      "default (empty)";
  for (const char* bad : {"x!y z", "99999999999999999999999", "1", "1,", ",1", "1,2,3,4", "nan,0", "inf,1",
                          "0x10,1", "1;2", "1,2,3x", "1 2"})
    expect_one_warning(std::string("CRITPATH_DEBUG_CLOCK_SKEW=") + bad,
                       std::string("critpath: CRITPATH_DEBUG_CLOCK_SKEW='") + bad + "' " + shape);
  for (const char* big : {"99999999999999999999999,0", "3601,0", "0,10001", "0,0,-3601", "1e400,0"})
    expect_one_warning(std::string("CRITPATH_DEBUG_CLOCK_SKEW=") + big,
                       std::string("critpath: CRITPATH_DEBUG_CLOCK_SKEW='") + big + "' " + range);

  cfg::ClockSkewValue v;
  REQUIRE(cfg::parse_clock_skew_value("0.005,100", v) == cfg::ValueError::kOk);
  CHECK(v.offset_s == 0.005);
  CHECK(v.drift_ppm == 100);
  CHECK(v.jump_s == 0);
  REQUIRE(cfg::parse_clock_skew_value(" 0 , 0 , -0.3 ", v) == cfg::ValueError::kOk);
  CHECK(v.jump_s == -0.3);
  REQUIRE(cfg::parse_clock_skew_value("-3600,1e4,3.6e3", v) == cfg::ValueError::kOk);
  CHECK(v.offset_s == -3600);
  CHECK(cfg::parse_clock_skew_value("", v) == cfg::ValueError::kEmpty);
  std::vector<std::string> w;
  CHECK(parse_env({"CRITPATH_DEBUG_CLOCK_SKEW=0,0,-0.3"}, w).debug_clock_skew == "0,0,-0.3");
  CHECK(w.empty());
}

TEST_CASE("unknown CRITPATH_ names warn, with a suggestion when close", "[config]") {
  expect_one_warning("CRITPATH_BUFER_SIZE=1G",
                     "critpath: unknown variable CRITPATH_BUFER_SIZE='1G' ignored (did you mean "
                     "CRITPATH_BUFFER_SIZE?)");
  expect_one_warning("CRITPATH_BUFFERSIZE=1G",
                     "critpath: unknown variable CRITPATH_BUFFERSIZE='1G' ignored (did you mean "
                     "CRITPATH_BUFFER_SIZE?)");
  expect_one_warning("CRITPATH_VERBSOE=2",
                     "critpath: unknown variable CRITPATH_VERBSOE='2' ignored (did you mean "
                     "CRITPATH_VERBOSE?)");
  expect_one_warning("CRITPATH_timer=tsc",
                     "critpath: unknown variable CRITPATH_timer='tsc' ignored (did you mean "
                     "CRITPATH_TIMER?)");
  expect_one_warning("CRITPATH_COMPRESION_LEVEL=3",
                     "critpath: unknown variable CRITPATH_COMPRESION_LEVEL='3' ignored (did you "
                     "mean CRITPATH_COMPRESSION_LEVEL?)");
  expect_one_warning("CRITPATH_FOO=1", "critpath: unknown variable CRITPATH_FOO='1' ignored");
  expect_one_warning("CRITPATH_=x", "critpath: unknown variable CRITPATH_='x' ignored");
  expect_one_warning("CRITPATH_BUFFER=1G", "critpath: unknown variable CRITPATH_BUFFER='1G' ignored");
}

TEST_CASE("several problems: one warning each, in order, good values still apply", "[config]") {
  std::vector<std::string> w{"an earlier line"};  // parse() appends
  const cfg::Config c = parse_env({"CRITPATH_BUFFER_SIZE=abc", "CRITPATH_VERBOSE=3", "CRITPATH_ENABLE=2",
                                   "CRITPATH_TIMR=tsc", "CRITPATH_TIMER=tsc", "CRITPATH_CHUNK_SIZE=1Q"},
                                  w);
  REQUIRE(w.size() == 5);
  CHECK(w[0] == "an earlier line");
  CHECK(w[1].starts_with("critpath: CRITPATH_BUFFER_SIZE='abc'"));
  CHECK(w[2].starts_with("critpath: CRITPATH_ENABLE='2'"));
  CHECK(w[3].starts_with("critpath: unknown variable CRITPATH_TIMR='tsc'"));
  CHECK(w[3].ends_with("(did you mean CRITPATH_TIMER?)"));
  CHECK(w[4].starts_with("critpath: CRITPATH_CHUNK_SIZE='1Q'"));
  CHECK(c.buffer_size == 64 * kMiB);
  CHECK(c.enable);
  CHECK(c.chunk_size == 256 * kKiB);
  CHECK(c.verbose == 3);
  CHECK(c.timer == "tsc");
}

TEST_CASE("odd environments", "[config]") {
  std::vector<std::string> w;
  CHECK(cfg::parse(nullptr, w) == cfg::Config{});
  const char* empty[] = {nullptr};
  CHECK(cfg::parse(empty, w) == cfg::Config{});
  CHECK(w.empty());

  // Not NAME=VALUE: ignored. Duplicates: the first wins, as with getenv.
  cfg::Config c = parse_env(
      {"CRITPATH_VERBOSE", "CRITPATH_VERBOSE=2", "CRITPATH_VERBOSE=3", "CRITPATH_VERBOSE=bad"}, w);
  CHECK(w.empty());
  CHECK(c.verbose == 2);

  // Value containing '=': part of the value.
  c = parse_env({"CRITPATH_OUTPUT_DIR=a=b"}, w);
  CHECK(c.output_dir == "a=b");
  // Empty string flag: the default, no warning.
  c = parse_env({"CRITPATH_SPILL_DIR="}, w);
  CHECK(c.spill_dir.empty());
  CHECK(w.empty());
  // Blanks around numbers are tolerated.
  c = parse_env({"CRITPATH_BUFFER_SIZE= 2G ", "CRITPATH_VERBOSE=\t0"}, w);
  CHECK(w.empty());
  CHECK(c.buffer_size == 2 * kGiB);
  CHECK(c.verbose == 0);

  // Control bytes are escaped and long values cut: the warning stays one short line.
  c = parse_env({"CRITPATH_VERBOSE=1\n2", "CRITPATH_TIMER=" + std::string(500, 'x')}, w);
  REQUIRE(w.size() == 2);
  CHECK(w[0] == "critpath: CRITPATH_VERBOSE='1\\x0a2' is not an integer; using the default 1");
  CHECK(w[1].find('\n') == std::string::npos);
  CHECK(w[1].size() < 200);
  CHECK(w[1].find("xxx...' is not one of") != std::string::npos);
}

TEST_CASE("format_size picks the largest exact unit", "[config]") {
  CHECK(cfg::format_size(0) == "0");
  CHECK(cfg::format_size(1) == "1");
  CHECK(cfg::format_size(1000) == "1000");
  CHECK(cfg::format_size(1024) == "1K");
  CHECK(cfg::format_size(1536) == "1536");
  CHECK(cfg::format_size(3 * kKiB) == "3K");
  CHECK(cfg::format_size(64 * kMiB) == "64M");
  CHECK(cfg::format_size(1536 * kMiB) == "1536M");
  CHECK(cfg::format_size(kTiB) == "1T");
  CHECK(cfg::format_size(1024 * kTiB) == "1024T");
  CHECK(cfg::format_size(UINT64_MAX) == "18446744073709551615");
  for (uint64_t v :
       {uint64_t(0), uint64_t(1), 1536 * kMiB, 1024 * kTiB, UINT64_MAX, UINT64_MAX - UINT64_MAX % kTiB}) {
    uint64_t back = 7;
    CHECK(cfg::parse_size(cfg::format_size(v), back));
    CHECK(back == v);
  }
}

TEST_CASE("describe() round-trips through parse()", "[config]") {
  for (const cfg::Config& original : {cfg::Config{}, all_changed()}) {
    const std::string text = cfg::describe(original);
    const std::vector<std::string> lines = split_lines(text);
    CHECK(lines.size() == cfg::flags().size());
    std::vector<std::string> w;
    CHECK(parse_lines(lines, w) == original);
    CHECK(w.empty());
  }
  const std::string text = cfg::describe(all_changed());
  CHECK(text.find("CRITPATH_ENABLE=false\n") != std::string::npos);
  CHECK(text.find("CRITPATH_BUFFER_SIZE=3G\n") != std::string::npos);
  CHECK(text.find("CRITPATH_CHUNK_SIZE=4608\n") != std::string::npos);
  CHECK(text.find("CRITPATH_COMPRESSION_LEVEL=-7\n") != std::string::npos);
  CHECK(text.find("CRITPATH_TIMER=monotonic\n") != std::string::npos);
}

TEST_CASE("describe() output can be re-sourced by sh", "[config]") {
  cfg::Config original = all_changed();
  original.output_dir = "my run/it's $HOME `x` ~";
  original.spill_dir = "~/spill";  // a bare ~ would expand in an assignment: quoted
  const std::string text = cfg::describe(original);
  CHECK(text.find("CRITPATH_OUTPUT_DIR='my run/it'\\''s $HOME `x` ~'\n") != std::string::npos);
  CHECK(text.find("CRITPATH_SPILL_DIR='~/spill'\n") != std::string::npos);

  char path[] = "/tmp/critpath-cfg-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << text;
  const std::string cmd = std::string("env -i /bin/sh -c 'set -a; . \"$0\"; env' ") + path;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  CHECK(pclose(p) == 0);
  std::remove(path);

  std::vector<std::string> lines;
  for (const std::string& l : split_lines(out))
    if (l.starts_with("CRITPATH_")) lines.push_back(l);
  CHECK(lines.size() == cfg::flags().size());
  std::vector<std::string> w;
  CHECK(parse_lines(lines, w) == original);
  CHECK(w.empty());
}

TEST_CASE("current() and set_current()", "[config]") {
  const cfg::Config saved = cfg::current();
  const cfg::Config changed = all_changed();
  cfg::set_current(changed);
  CHECK(cfg::current() == changed);
  CHECK(&cfg::current() == &cfg::current());
  cfg::set_current(cfg::Config{});
  CHECK(cfg::current() == cfg::Config{});
  cfg::set_current(saved);
}

TEST_CASE("docs/configuration.md is up to date with flags.inc", "[config]") {
  // This file is <root>/tests/unit/config/<name>.cpp (CMake passes absolute paths; a
  // relative __FILE__ is taken from the current directory).
  const std::string self = __FILE__;
  const size_t at = self.rfind("tests/unit/");
  REQUIRE(at != std::string::npos);
  const std::string path = self.substr(0, at) + "docs/configuration.md";
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::stringstream file;
  file << in.rdbuf();
  const std::string committed = file.str(), rendered = cfg::render_markdown();
  REQUIRE_FALSE(rendered.empty());
  if (committed != rendered) {
    const std::vector<std::string> a = split_lines(committed), b = split_lines(rendered);
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    FAIL("docs/configuration.md is stale; run: python3 libtrace/config/gen_config_doc.py\n"
         << "first difference at line " << i + 1 << "\n  committed: " << (i < a.size() ? a[i] : "<end>")
         << "\n  expected:  " << (i < b.size() ? b[i] : "<end>"));
  }
  // Every variable appears in the rendered table.
  for (const cfg::FlagInfo& f : cfg::flags())
    CHECK(rendered.find("| `" + std::string(f.name) + "` |") != std::string::npos);
  for (const cfg::LauncherVarInfo& v : cfg::launcher_vars())
    CHECK(rendered.find("| `" + std::string(v.name) + "` |") != std::string::npos);
}
