// critpath — analyzer/engine/atomic_file.h: report files appear whole or not at all.
//
// A full filesystem or an unwritable directory must never leave a zero-byte or half-written
// report.json next to a complete summary.txt: each file is written to `<path>.partial`
// (created 0644, never following a symlink), flushed to the device, then renamed over
// `path`; on any error the partial file is removed and `path` is left as it was.
#pragma once

#include <string>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

Status write_file_atomic(const std::string& path, const std::string& text);
// "<path>: <strerror>" of this thread's last failed write_file_atomic ("" before any).
const std::string& last_write_error();

}  // namespace critpath::analyzer
