// critpath — benchmarks/bench_hooks_instr.cpp: the dilation kernel built with
// -finstrument-functions (benchmarks/CMakeLists.txt), calling the hooks under test.
#define KERNEL_NS kernel_instr
#include "bench_hooks_kernel.inc"
