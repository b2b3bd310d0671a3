// critpath — libtrace/runtime/status.cpp
#include "libtrace/runtime/status.h"

namespace critpath {

const char* to_string(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kIoError: return "I/O error";
    case Status::kNoMemory: return "out of memory";
    case Status::kCorrupt: return "corrupt data";
    case Status::kCompressError: return "compression error";
    case Status::kUnsupported: return "unsupported";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kMpiError: return "MPI error";
  }
  return "unknown status";
}

}  // namespace critpath
