// critpath — tests/fuzz/fuzz_filter.cpp: libFuzzer target for the filter-file parser
// (compiler_hooks/filter.*, Score-P filter syntax). Any text must parse or be refused with a
// message, never crash; a filter that parsed must answer matches for arbitrary names.
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler_hooks/filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  critpath::hooks::Filter filter;
  std::string error;
  if (filter.parse(text, &error) == critpath::Status::kOk) {
    // Names and files taken from the input itself exercise the wildcard matcher.
    const std::string_view name = text.substr(0, text.size() / 2);
    const std::string_view file = text.substr(text.size() / 2);
    (void)filter.excluded(name, name, file);
    (void)filter.excluded(file, name, name);
    (void)critpath::hooks::wildcard_match(name, file);
  } else if (error.empty()) {
    __builtin_trap();  // a refusal must say why
  }
  return 0;
}
