/* critpath — compiler_hooks/xray_api.h
 *
 * The handshake between a program built by `critpath-cc/-cxx --xray` and libcritpath.
 *
 * clang links its XRay runtime statically into the executable, with hidden visibility, so
 * libcritpath cannot look the __xray_* functions up. critpath_xray.o (xray_bridge.c, linked
 * into the executable by the wrappers) takes their addresses and hands them over from a
 * constructor: critpath_attach_xray(&api). libcritpath's side is compiler_hooks/xray.cpp.
 *
 * C, so that the bridge can be compiled by any C compiler. The struct is versioned: its first
 * member is kCritpathXrayApiVersion; members are only ever appended.
 */
#ifndef CRITPATH_XRAY_API_H
#define CRITPATH_XRAY_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CRITPATH_XRAY_API_VERSION 1u

/* XRayPatchingStatus and XRayEntryType values of <xray/xray_interface.h> (LLVM 7 and later). */
enum { CRITPATH_XRAY_SUCCESS = 1 };
enum { CRITPATH_XRAY_ENTRY = 0, CRITPATH_XRAY_EXIT = 1, CRITPATH_XRAY_TAIL = 2 };

struct critpath_xray_api {
  uint32_t version; /* CRITPATH_XRAY_API_VERSION */
  int (*set_handler)(void (*handler)(int32_t function_id, int entry_type));
  int (*remove_handler)(void);
  int (*patch)(void);
  int (*unpatch)(void);
  int (*patch_function)(int32_t function_id);
  int (*unpatch_function)(int32_t function_id);
  uintptr_t (*function_address)(int32_t function_id);
  size_t (*max_function_id)(void);
};

/* Exported by libcritpath (the only XRay-related symbol it exports). `api` must stay valid
 * for the life of the process. */
void critpath_attach_xray(const struct critpath_xray_api* api);

#ifdef __cplusplus
}
#endif

#endif /* CRITPATH_XRAY_API_H */
