// critpath — tests/fuzz/otf2_archive_bytes.h: an OTF2 archive (a directory: the anchor file
// traces.otf2, the global definitions traces.def, per location traces/<id>.def and
// traces/<id>.evt) as one byte string, the input of the importer's fuzz target
// (fuzz_otf2_import.cpp) and of its seeds (tests/fuzz/corpus/otf2_import, written by
// tests/unit/analyzer/otf2/otf2_import_damage_test.cpp). The files follow each other as
//
//   name '\0' size (4 bytes, little-endian) contents
//
// read back leniently, so that every mutation of the bytes is an archive: a size past the end
// keeps what is there (a truncated file), a record without its '\0' or size ends the list, and
// a name that is not of the form "[traces/]<letters, digits, '.', '_', '-'>" (at most 64 bytes,
// no "..") is skipped; a later file of the same name replaces the earlier one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace critpath::fuzz {

// The files of archive directory `dir` (every regular file, paths relative to it, sorted).
inline std::string pack_archive(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) names.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    const std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out += name;
    out += '\0';
    for (int i = 0; i < 4; ++i) out += char((contents.size() >> (8 * i)) & 0xff);
    out += contents;
  }
  return out;
}

// Whether `name` may become a file of the archive directory: one level of "traces/" at most.
inline bool archive_file_name(std::string_view name) {
  if (name.substr(0, 7) == "traces/") name.remove_prefix(7);
  if (name.empty() || name.size() > 64 || name == "." || name.find("..") != std::string_view::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// Writes the files of `bytes` into `dir` (created if missing), after removing everything in
// it. Returns how many files it wrote.
inline int unpack_archive(const uint8_t* bytes, size_t size, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir + "/traces", ec);
  int written = 0;
  size_t at = 0;
  while (at < size) {
    const auto* end = static_cast<const uint8_t*>(std::find(bytes + at, bytes + size, uint8_t(0)));
    if (end == bytes + size || size_t(bytes + size - end) < 5) break;
    const std::string name(reinterpret_cast<const char*>(bytes + at), size_t(end - (bytes + at)));
    size_t length = 0;
    for (int i = 0; i < 4; ++i) length |= size_t(end[1 + i]) << (8 * i);
    at = size_t(end - bytes) + 5;
    length = std::min(length, size - at);
    if (archive_file_name(name)) {
      std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes + at), std::streamsize(length));
      written += bool(out);
    }
    at += length;
  }
  return written;
}

}  // namespace critpath::fuzz
