/* critpath — tests/mpi/hooks/hooks_dlopen.c: an instrumented shared library loaded with
 * dlopen after MPI_Init (path in argv[1]) gets its functions named:
 *   main/plugin_work               2 visits, inclusive 2 x 100 ms, exclusive 2 x 40 ms
 *   main/plugin_work/plugin_inner  2 visits, 2 x 60 ms */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  void (*start)(void) = (void (*)(void))dlsym(h, "plugin_start");
  void (*work)(void) = (void (*)(void))dlsym(h, "plugin_work");
  if (!start || !work) return 4;
  start();
  for (int i = 0; i < 2; ++i) work();
  MPI_Finalize();
  return 0;
}
