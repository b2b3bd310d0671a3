/* critpath — compiler_hooks/xray_bridge.c: critpath_xray.o, linked into programs built by
 * `critpath-cc/-cxx --xray` (compiler_hooks/xray_api.h has why).
 *
 * Its constructor hands the executable's XRay runtime to libcritpath. The reference to
 * critpath_attach_xray is weak: a program run without libcritpath starts all the same, its
 * sleds never patched. Compiled by the C compiler critpath is built with: it has no sleds.
 */
#include "compiler_hooks/xray_api.h"

/* The XRay runtime's interface (<xray/xray_interface.h>), declared with int for its enums. */
extern int __xray_set_handler(void (*entry)(int32_t, int));
extern int __xray_remove_handler(void);
extern int __xray_patch(void);
extern int __xray_unpatch(void);
extern int __xray_patch_function(int32_t function_id);
extern int __xray_unpatch_function(int32_t function_id);
extern uintptr_t __xray_function_address(int32_t function_id);
extern size_t __xray_max_function_id(void);

extern void critpath_attach_xray(const struct critpath_xray_api* api) __attribute__((weak));

// clang-format off
static const struct critpath_xray_api kApi = {
    CRITPATH_XRAY_API_VERSION, __xray_set_handler,    __xray_remove_handler,
    __xray_patch,              __xray_unpatch,        __xray_patch_function,
    __xray_unpatch_function,   __xray_function_address, __xray_max_function_id,
};
// clang-format on

__attribute__((constructor)) static void critpath_xray_bridge_attach(void) {
  if (critpath_attach_xray) critpath_attach_xray(&kApi);
}
