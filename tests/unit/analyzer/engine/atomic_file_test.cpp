// critpath — tests/unit/analyzer/engine/atomic_file_test.cpp: report files appear whole or not at
// all (a full or unwritable output directory never leaves a zero-byte or half-written file).
#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "analyzer/engine/atomic_file.h"

using namespace critpath;

namespace {

std::string fresh_dir() {
  char tmpl[] = "/tmp/critpath-atomic-XXXXXX";
  const char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

std::string read(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("write_file_atomic writes the whole file and leaves no partial one", "[report]") {
  const std::string dir = fresh_dir();
  const std::string path = dir + "/report.json";
  REQUIRE(analyzer::write_file_atomic(path, "{\"a\": 1}\n") == Status::kOk);
  CHECK(read(path) == "{\"a\": 1}\n");
  CHECK(!exists(path + ".partial"));
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  const mode_t mask = umask(0);
  umask(mask);
  CHECK((st.st_mode & 0777) == (0644 & ~mask));
  REQUIRE(analyzer::write_file_atomic(path, "second\n") == Status::kOk);
  CHECK(read(path) == "second\n");
}

TEST_CASE("write_file_atomic fails cleanly: missing directory, symlinked partial name", "[report]") {
  const std::string dir = fresh_dir();
  CHECK(analyzer::write_file_atomic(dir + "/missing/report.json", "x") == Status::kIoError);
  CHECK(!exists(dir + "/missing"));
  // A symlink planted at the partial name is never followed.
  const std::string victim = dir + "/victim";
  { std::ofstream(victim) << "keep"; }
  REQUIRE(::symlink(victim.c_str(), (dir + "/r.json.partial").c_str()) == 0);
  CHECK(analyzer::write_file_atomic(dir + "/r.json", "evil") == Status::kIoError);
  CHECK(read(victim) == "keep");
  CHECK(!exists(dir + "/r.json"));
}

TEST_CASE("write_file_atomic on a full filesystem leaves the old file or none", "[report]") {
  const std::string dir = fresh_dir();
  // A 64 KiB tmpfs (root only; skipped where mounting is not allowed).
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
    WARN("cannot mount a tmpfs here: full-filesystem case skipped");
    return;
  }
  const std::string big(256 * 1024, 'x');
  CHECK(analyzer::write_file_atomic(dir + "/report.json", big) == Status::kIoError);
  CHECK(!exists(dir + "/report.json"));
  CHECK(!exists(dir + "/report.json.partial"));
  REQUIRE(analyzer::write_file_atomic(dir + "/summary.txt", "small\n") == Status::kOk);
  CHECK(analyzer::write_file_atomic(dir + "/summary.txt", big) == Status::kIoError);
  CHECK(read(dir + "/summary.txt") == "small\n");
  ::umount(dir.c_str());
}
