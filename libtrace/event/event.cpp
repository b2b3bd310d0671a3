// critpath — libtrace/event/event.cpp
//
// Names of the event kinds, for dumps and diagnostics. The kind values themselves are part
// of the trace format (event.h, docs/trace-format.md); the names are not.
#include "libtrace/event/event.h"

namespace critpath::trace {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kInvalid: return "INVALID";
    case EventKind::kEnter: return "ENTER";
    case EventKind::kExit: return "EXIT";
    case EventKind::kSend: return "SEND";
    case EventKind::kRecv: return "RECV";
    case EventKind::kIsend: return "ISEND";
    case EventKind::kIsendComplete: return "ISEND_COMPLETE";
    case EventKind::kIrecvRequest: return "IRECV_REQUEST";
    case EventKind::kIrecv: return "IRECV";
    case EventKind::kRequestTest: return "REQUEST_TEST";
    case EventKind::kRequestCancel: return "REQUEST_CANCEL";
    case EventKind::kCollBegin: return "COLL_BEGIN";
    case EventKind::kCollEnd: return "COLL_END";
    case EventKind::kIcollPost: return "ICOLL_POST";
    case EventKind::kIcollComplete: return "ICOLL_COMPLETE";
    case EventKind::kRmaWinCreate: return "RMA_WIN_CREATE";
    case EventKind::kRmaWinFree: return "RMA_WIN_FREE";
    case EventKind::kRmaPut: return "RMA_PUT";
    case EventKind::kRmaGet: return "RMA_GET";
    case EventKind::kRmaAccumulate: return "RMA_ACCUMULATE";
    case EventKind::kRmaSync: return "RMA_SYNC";
    case EventKind::kRmaCollSync: return "RMA_COLL_SYNC";
    case EventKind::kRmaRequestComplete: return "RMA_REQUEST_COMPLETE";
    case EventKind::kMeasurementOff: return "MEASUREMENT_OFF";
    case EventKind::kMeasurementOn: return "MEASUREMENT_ON";
    case EventKind::kCounters: return "COUNTERS";
    case EventKind::kCallsite: return "CALLSITE";
    case EventKind::kRmaLast:  // a range marker, not a recorded kind
    case EventKind::kKindEnd: break;
  }
  return "UNKNOWN";
}

}  // namespace critpath::trace
