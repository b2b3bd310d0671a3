/* critpath — tests/mpi/hooks/hooks_plugin.c: the dlopen'ed library of hooks_dlopen.c. */
#include "hooks_timing.h"

__attribute__((noinline)) static void plugin_inner(void) { hooks_sleep_ms(60); }

__attribute__((visibility("default"))) void plugin_start(void) { hooks_clock_start(); }

__attribute__((visibility("default"))) void plugin_work(void) {
  hooks_sleep_ms(40);
  plugin_inner();
}
