// critpath — compiler_hooks/cyg_profile.cpp
//
// Placeholder for the -finstrument-functions entry points (__cyg_profile_func_enter/exit),
// which arrive with the compiler-hooks work. Until then the library records MPI calls and
// user regions only; an instrumented application still links and runs (the hooks are
// resolved by libc's weak defaults or by this library once they exist).
namespace critpath::hooks {}
