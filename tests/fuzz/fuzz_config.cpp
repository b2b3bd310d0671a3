// critpath — tests/fuzz/fuzz_config.cpp: libFuzzer target for the configuration parser
// (libtrace/config/config.*). The input is an environment: NUL-separated NAME=value entries,
// the names mostly real CRITPATH_* variables (the first byte of an entry picks one, so the
// fuzzer reaches every parser) and the values arbitrary bytes. parse() must never crash,
// must say something for a value it refuses, and what it returns must describe() and parse
// back to itself once the shell has unquoted it (`set -a; . ./critpath.cfg` restores a run's
// settings), unless a string holds a line break.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "libtrace/config/config.h"

using namespace critpath;

namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const config::FlagInfo& f : config::flags()) out.emplace_back(f.name);
  return out;
}

// What the shell makes of describe()'s value: '...' quoted runs and \' escapes unquoted.
std::string shell_unquote(const std::string& v) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\'') {
      quoted = !quoted;
    } else if (!quoted && v[i] == '\\' && i + 1 < v.size()) {
      out += v[++i];
    } else {
      out += v[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> known = names();
  std::vector<std::string> entries;
  size_t at = 0;
  while (at < size && entries.size() < 64) {
    const uint8_t pick = data[at++];
    size_t end = at;
    while (end < size && data[end] != 0) ++end;
    std::string value(reinterpret_cast<const char*>(data) + at, end - at);
    at = end + 1;
    if (pick < 0xf0 && !known.empty()) entries.push_back(known[pick % known.size()] + "=" + value);
    else entries.push_back(value);  // a whole entry of its own: any name, or none
  }
  std::vector<const char*> envp;
  for (const std::string& e : entries) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  std::vector<std::string> warnings;
  const config::Config cfg = config::parse(envp.data(), warnings);
  for (const std::string& w : warnings)
    if (w.empty()) std::abort();

  // Round trip through critpath.cfg's lines: the same settings, no warning.
  std::vector<std::string> lines;
  std::string text = config::describe(cfg);
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(from, nl - from);
    from = nl + 1;
    const size_t eq = line.find('=');
    if (!line.empty() && line[0] != '#' && eq != std::string::npos)
      lines.push_back(line.substr(0, eq + 1) + shell_unquote(line.substr(eq + 1)));
  }
  // A string value with a line break does not fit critpath.cfg's one line per variable.
  if (size_t(std::count(text.begin(), text.end(), '\n')) != config::flags().size()) return 0;
  std::vector<const char*> env2;
  for (const std::string& l : lines) env2.push_back(l.c_str());
  env2.push_back(nullptr);
  std::vector<std::string> warnings2;
  const config::Config again = config::parse(env2.data(), warnings2);
  if (config::describe(again) != text) {
    std::fprintf(stderr, "round trip differs:\n--- parsed\n%s--- parsed again\n%s", text.c_str(),
                 config::describe(again).c_str());
    for (const std::string& w : warnings2) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::abort();
  }
  return 0;
}
