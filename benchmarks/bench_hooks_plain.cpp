// critpath — benchmarks/bench_hooks_plain.cpp: the dilation kernel without instrumentation.
#define KERNEL_NS kernel_plain
#include "bench_hooks_kernel.inc"
