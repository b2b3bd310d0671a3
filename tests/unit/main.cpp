// critpath — tests/unit/main.cpp: the Catch2 v2 runner for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
