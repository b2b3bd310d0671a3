// critpath — compiler_hooks/site_patch.h
//
// GCC mode's answer to XRay's unpatching (docs/instrumentation.md, "Patched-out hook calls"):
// once a function is filtered (CRITPATH_FILTER) or dropped by the automatic filter, each of
// its -finstrument-functions hook calls is turned into a jump over itself the next time it
// runs, so that the function then costs what it costs uninstrumented plus the argument set-up
// of two calls (two `mov`s and a taken jump per hook) instead of two calls into critpath.
// GCC puts a hook call at every entry and exit of every inlined copy: each call site is
// patched on its own, at its first call after the verdict.
//
// A site is the call instruction that returned to the hook (its return address):
//
//   e8 rel32            call hook, or call its PLT stub ([endbr64] [bnd] jmp *GOT(%rip))
//   ff 15 disp32        call *GOT(%rip) (-fno-plt)
//
// and is patched only when the instruction, the stub and the GOT slot all lie in the
// executable or library that made the call (dl_iterate_phdr) and the call really leads to
// the hook. The patch is one atomic 2-byte store of `jmp rel8` over the first two bytes (the
// rest is jumped over; a thread that already decoded the call still makes it), under
// mprotect(PROT_WRITE) of the page, then the segment's own protection again: the way XRay
// writes its sleds. A site that cannot be patched (another instruction, a 2-byte store across
// a cache line) is remembered and its function goes on through the hooks; a refused mprotect
// (W^X policies) stops all patching, with one note.
#pragma once

#include <cstdint>

namespace critpath::hooks::site_patch {

// Patches the hook call that returned to `ret`, if it calls `hook`. Cold; any thread.
// True when the site is patched now (or was already).
bool patch(uintptr_t ret, uintptr_t hook);

// Sites patched so far (process-wide), and whether patching was refused by the system.
uint64_t sites_patched();
bool refused();

}  // namespace critpath::hooks::site_patch
