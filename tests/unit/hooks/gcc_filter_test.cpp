// critpath — tests/unit/hooks/gcc_filter_test.cpp: filter files as GCC exclusion lists
// (compiler_hooks/gcc_filter.h). The expected strings are GCC 12's printable names, checked
// against g++ -finstrument-functions-exclude-function-list by hand and, end to end, by the
// test mpi.hooks.gcc_filter.
#include <catch2/catch.hpp>

#include "compiler_hooks/filter.h"
#include "compiler_hooks/gcc_filter.h"

using namespace critpath;
using hooks::Filter;
using hooks::GccExclusions;
using hooks::Mapping;
using hooks::SourceLang;

namespace {

std::string gcc_name(const char* demangled, SourceLang lang = SourceLang::kCxx) {
  std::string why;
  std::string out = hooks::gcc_function_name(demangled, lang, &why);
  if (out.empty()) return "(" + why + ")";
  return out;
}

GccExclusions exclusions_of(const char* text, SourceLang lang = SourceLang::kCxx) {
  Filter f;
  std::string err;
  REQUIRE(f.parse(text, &err) == Status::kOk);
  return hooks::gcc_exclusions(f, lang);
}

}  // namespace

TEST_CASE("gcc filter: demangled names become GCC's printable names", "[hooks]") {
  CHECK(gcc_name("c_fn") == "c_fn");
  CHECK(gcc_name("static_fn(int)") == "static_fn");
  CHECK(gcc_name("ns::Domain::x(int)") == "ns::Domain::x");
  CHECK(gcc_name("ns::Domain::Domain()") == "ns::Domain::Domain");
  CHECK(gcc_name("ns::Domain::~Domain()") == "ns::Domain::~Domain");
  CHECK(gcc_name("ns::Solver<double>::step(int) const") == "ns::Solver<double>::step");
  CHECK(gcc_name("double ns::reduce_all<double>(double)") == "ns::reduce_all<double>");
  CHECK(gcc_name("Foo<Bar<int> >::get()") == "Foo<Bar<int> >::get");
  CHECK(gcc_name("Foo<int*>::get()") == "Foo<int*>::get");
  CHECK(gcc_name("Fix<3>::get()") == "Fix<3>::get");
  CHECK(gcc_name("(anonymous namespace)::anon_fn(int)") == "{anonymous}::anon_fn");
  CHECK(gcc_name("main::{lambda(int)#1}::operator()(int) const") == "<lambda(int)>::operator()");
  CHECK(gcc_name("ns::Domain::operator[](int)") == "ns::Domain::operator[]");
  CHECK(gcc_name("A::operator<(A const&) const") == "A::operator<");
  CHECK(gcc_name("A::operator int() const") == "A::operator int");
  CHECK(gcc_name("A::operator unsigned long() const") == "A::operator ");
  CHECK(gcc_name("A::operator new(unsigned long)") == "A::operator new");
  CHECK(gcc_name("foo(int) [clone .constprop.0]") == "foo");
  CHECK(gcc_name("std::vector<int, std::allocator<int> > make<int>(int)") == "make<int>");
  CHECK(gcc_name("V::get() const &&") == "V::get");
}

TEST_CASE("gcc filter: template arguments GCC spells differently", "[hooks]") {
  // GCC: "long unsigned int", "const char*", and default arguments left out.
  CHECK(gcc_name("Foo<unsigned long>::get()") == "(template arguments GCC spells differently)");
  CHECK(gcc_name("Foo<char const*>::get()") == "(template arguments GCC spells differently)");
  CHECK(gcc_name("ns::Pair<int, long>::get(long)") == "(template arguments GCC spells differently)");
  // A function template: all its instantiations; a nested class: the member part.
  CHECK(gcc_name("ns::convert<unsigned long>(int)") == "ns::convert<");
  CHECK(gcc_name("o::Out<long>::In::get()") == "::In::get");
  CHECK(gcc_name("0x4011a0") == "(no symbol name)");
  CHECK(gcc_name("app+0x11a0") == "(no symbol name)");
}

TEST_CASE("gcc filter: Fortran names", "[hooks]") {
  // critpath's names (from the symbols) and GCC's (the procedure's own name).
  CHECK(gcc_name("work::compute", SourceLang::kFortran) == "compute");
  CHECK(gcc_name("plain_sub_", SourceLang::kFortran) == "plain_sub");
  CHECK(gcc_name("MAIN__", SourceLang::kFortran).find("PROGRAM") != std::string::npos);
  const GccExclusions x = exclusions_of(R"(
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE work::comp* *_sub_
SCOREP_REGION_NAMES_END
)",
                                        SourceLang::kFortran);
  CHECK(x.functions == std::vector<std::string>{"comp", "_sub"});
}

TEST_CASE("gcc filter: rules and wildcards", "[hooks]") {
  const GccExclusions x = exclusions_of(R"(
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */third_party/* *.inl /opt/vendor/* */a/*/b.c
SCOREP_FILE_NAMES_END
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE solve* *_kernel *util* a*b tiny? * MANGLED _ZN2ns6Domain1yEi _ZN2ns*
  EXCLUDE ns::Domain::x(int) ns::Domain::x(int)
SCOREP_REGION_NAMES_END
)");
  CHECK(x.files == std::vector<std::string>{"/third_party/", ".inl", "/opt/vendor/"});
  CHECK(x.functions ==
        std::vector<std::string>{"solve", "_kernel", "util", "ns::Domain::y", "ns::Domain::x"});
  REQUIRE(x.entries.size() == 14);
  CHECK(x.entries[3].mapping == Mapping::kRuntimeOnly);  // */a/*/b.c
  CHECK(x.runtime_only() == 5);                          // a/*/b.c, a*b, tiny?, *, MANGLED _ZN2ns*
  CHECK(hooks::gcc_options(x) ==
        std::vector<std::string>{
            "-finstrument-functions-exclude-function-list=solve,_kernel,util,ns::Domain::y,ns::Domain::x",
            "-finstrument-functions-exclude-file-list=/third_party/,.inl,/opt/vendor/"});
}

TEST_CASE("gcc filter: an EXCLUDE an INCLUDE may undo stays a run-time rule", "[hooks]") {
  const GccExclusions x = exclusions_of(R"(
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE *
  INCLUDE main solve*
  EXCLUDE helper
SCOREP_REGION_NAMES_END
)");
  REQUIRE(x.entries.size() == 4);
  CHECK(x.entries[0].mapping == Mapping::kRuntimeOnly);
  CHECK(x.entries[1].mapping == Mapping::kNotNeeded);
  CHECK(x.entries[2].mapping == Mapping::kNotNeeded);
  CHECK(x.entries[3].mapping == Mapping::kMapped);
  CHECK(x.functions == std::vector<std::string>{"helper"});
  CHECK(x.runtime_only() == 1);
  CHECK(hooks::gcc_options(exclusions_of("SCOREP_REGION_NAMES_BEGIN\nINCLUDE x\nSCOREP_REGION_NAMES_END\n"))
            .empty());
}

TEST_CASE("gcc filter: the suggested filter file's escaped names", "[hooks]") {
  // analyzer/report writes names with blanks and wildcard characters escaped.
  const std::string name = "double ns::sum<double*>(double*, int) [clone .cold]";
  const std::string esc = hooks::escape_wildcard(name);
  CHECK(esc == "double\\ ns::sum<double\\*>(double\\*,\\ int)\\ \\[clone\\ .cold\\]");
  Filter f;
  std::string err;
  REQUIRE(f.parse("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE " + esc + " other\nSCOREP_REGION_NAMES_END\n",
                  &err) == Status::kOk);
  CHECK(f.excluded(name, "", ""));
  CHECK_FALSE(f.excluded("double ns::sum<double*>(double*, int)", "", ""));
  const GccExclusions x = hooks::gcc_exclusions(f, SourceLang::kCxx);
  CHECK(x.functions == std::vector<std::string>{"ns::sum<double*>", "other"});
}
