// critpath — tests/unit/hooks/filter_test.cpp: the CRITPATH_FILTER file syntax and its
// wildcard matcher (compiler_hooks/filter.h), Score-P semantics.
#include <catch2/catch.hpp>

#include "compiler_hooks/filter.h"

using namespace critpath;
using hooks::Filter;
using hooks::wildcard_match;

TEST_CASE("filter: shell wildcards", "[hooks]") {
  CHECK(wildcard_match("*", ""));
  CHECK(wildcard_match("*", "a/b/c"));  // '*' also matches '/'
  CHECK(wildcard_match("foo", "foo"));
  CHECK_FALSE(wildcard_match("foo", "foobar"));
  CHECK(wildcard_match("foo*", "foobar"));
  CHECK(wildcard_match("*bar", "foobar"));
  CHECK(wildcard_match("f?o", "fxo"));
  CHECK_FALSE(wildcard_match("f?o", "fo"));
  CHECK(wildcard_match("*/lib/*.c", "/usr/src/lib/x.c"));
  CHECK(wildcard_match("[abc]x", "bx"));
  CHECK_FALSE(wildcard_match("[abc]x", "dx"));
  CHECK(wildcard_match("[a-c]x", "cx"));
  CHECK(wildcard_match("[!a-c]x", "dx"));
  CHECK_FALSE(wildcard_match("[!a-c]x", "ax"));
  CHECK(wildcard_match("a\\*b", "a*b"));
  CHECK_FALSE(wildcard_match("a\\*b", "axb"));
  CHECK(wildcard_match("*a*b*c*", "xxaxxbxxcxx"));
  CHECK_FALSE(wildcard_match("*a*b*c*", "xxaxxcxxbxx"));
  CHECK(wildcard_match("ns::Vec<*>::dot(*) const", "ns::Vec<double>::dot(ns::Vec<double> const&) const"));
  CHECK(wildcard_match(hooks::escape_wildcard("operator[](int)"), "operator[](int)"));
  CHECK_FALSE(wildcard_match(hooks::escape_wildcard("operator*"), "operator+"));
}

TEST_CASE("filter: rules apply in order, last match wins, files first", "[hooks]") {
  Filter f;
  std::string err;
  REQUIRE(f.parse(R"(
# comment
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */third_party/*
  INCLUDE */third_party/keep.c
SCOREP_FILE_NAMES_END
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE main solve* MANGLED _Z3fooi   # mangled match for foo(int)
  EXCLUDE solve_tiny
  INCLUDE hash\#tag
SCOREP_REGION_NAMES_END
)",
                  &err) == Status::kOk);
  INFO(err);
  CHECK(f.rule_count() == 6);
  CHECK_FALSE(f.excluded("main", "main", "/src/a.c"));
  CHECK_FALSE(f.excluded("solve_big", "solve_big", "/src/a.c"));
  CHECK(f.excluded("solve_tiny", "solve_tiny", "/src/a.c"));
  CHECK(f.excluded("helper", "helper", "/src/a.c"));
  CHECK_FALSE(f.excluded("foo(int)", "_Z3fooi", ""));   // MANGLED pattern
  CHECK(f.excluded("_Z3fooi", "foo(int)", ""));         // ... not matched against demangled
  CHECK_FALSE(f.excluded("hash#tag", "hash#tag", ""));  // \# is a literal '#'
  // A file excluded stays excluded: region rules cannot re-include it.
  CHECK(f.excluded("main", "main", "/src/third_party/lib.c"));
  CHECK_FALSE(f.excluded("main", "main", "/src/third_party/keep.c"));
  // Unknown file (no debug info): only region rules apply.
  CHECK_FALSE(f.excluded("main", "main", ""));
}

TEST_CASE("filter: critpath keywords and an empty filter", "[hooks]") {
  Filter f;
  REQUIRE(f.parse("CRITPATH_REGION_NAMES_BEGIN\n EXCLUDE tiny*\nCRITPATH_REGION_NAMES_END\n", nullptr) ==
          Status::kOk);
  CHECK(f.excluded("tiny_add", "tiny_add", ""));
  CHECK_FALSE(f.excluded("big", "big", ""));
  Filter e;
  REQUIRE(e.parse("# nothing\n\n", nullptr) == Status::kOk);
  CHECK(e.empty());
  CHECK_FALSE(e.excluded("anything", "anything", "x.c"));
}

TEST_CASE("filter: syntax errors name the line", "[hooks]") {
  Filter f;
  std::string err;
  CHECK(f.parse("EXCLUDE foo\n", &err) == Status::kInvalidArgument);
  CHECK(err.find("line 1") != std::string::npos);
  CHECK(f.parse("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n", &err) ==
        Status::kInvalidArgument);
  CHECK(err.find("line 2") != std::string::npos);
  CHECK(f.parse("SCOREP_REGION_NAMES_BEGIN\n  IGNORE x\nSCOREP_REGION_NAMES_END\n", &err) ==
        Status::kInvalidArgument);
  CHECK(f.parse("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE x\n", &err) == Status::kInvalidArgument);
  CHECK(err.find("END") != std::string::npos);
  CHECK(f.parse("SCOREP_FILE_NAMES_BEGIN\n  EXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END\n", &err) ==
        Status::kInvalidArgument);
  CHECK(f.empty());  // a failed parse leaves no rules
  CHECK(f.load("/nonexistent/critpath-filter", &err) == Status::kIoError);
  CHECK(f.load("/tmp", &err) == Status::kIoError);  // a directory reads as empty: refused
  CHECK(err.find("directory") != std::string::npos);
}

TEST_CASE("filter: escaped blanks belong to the pattern", "[hooks]") {
  // C++ names carry blanks ("f(int, double)"); the suggested filter file escapes them.
  CHECK(hooks::escape_wildcard("ns::f(int, double) const") == "ns::f(int,\\ double)\\ const");
  Filter f;
  std::string err;
  REQUIRE(f.parse("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE ns::f(int,\\ double)\\ const other\n"
                  "SCOREP_REGION_NAMES_END\n",
                  &err) == Status::kOk);
  CHECK(f.excluded("ns::f(int, double) const", "", ""));
  CHECK(f.excluded("other", "", ""));
  CHECK_FALSE(f.excluded("ns::f(int,", "", ""));
  CHECK_FALSE(f.excluded("double)", "", ""));
}
