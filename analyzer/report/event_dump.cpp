// critpath — analyzer/report/event_dump.cpp
#include "analyzer/report/event_dump.h"

#include <cinttypes>
#include <cstdio>

#include "libtrace/buffer/trace_reader.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer {

std::string format_event(const trace::Event& e, const defs::RegionTable& regions) {
  using K = trace::EventKind;
  char buf[512];
  const char* kind = trace::to_string(e.kind);
  switch (e.kind) {
    case K::kEnter:
    case K::kExit: std::snprintf(buf, sizeof buf, "%s %s", kind, regions.get(e.region).name.c_str()); break;
    case K::kSend:
    case K::kRecv:
      std::snprintf(buf, sizeof buf, "%s peer=%d tag=%d comm=%u bytes=%" PRIu64, kind, e.peer, e.tag, e.comm,
                    e.bytes);
      break;
    case K::kIsend:
    case K::kIrecv:
      std::snprintf(buf, sizeof buf, "%s peer=%d tag=%d comm=%u bytes=%" PRIu64 " req=%" PRIu64, kind, e.peer,
                    e.tag, e.comm, e.bytes, e.request);
      break;
    case K::kIsendComplete:
    case K::kIrecvRequest:
    case K::kRequestCancel:
    case K::kRequestTest:
    case K::kIcollComplete: std::snprintf(buf, sizeof buf, "%s req=%" PRIu64, kind, e.request); break;
    case K::kCollEnd:
      std::snprintf(buf, sizeof buf, "%s op=%s comm=%u root=%d sent=%" PRIu64 " recv=%" PRIu64, kind,
                    regions.get(e.region).name.c_str(), e.comm, e.root, e.bytes, e.bytes_received);
      break;
    case K::kIcollPost:
      std::snprintf(buf, sizeof buf,
                    "%s op=%s comm=%u root=%d sent=%" PRIu64 " recv=%" PRIu64 " req=%" PRIu64, kind,
                    regions.get(e.region).name.c_str(), e.comm, e.root, e.bytes, e.bytes_received, e.request);
      break;
    default:
      if (e.kind >= K::kRmaFirst && e.kind <= K::kRmaLast) {
        std::snprintf(buf, sizeof buf, "%s win=%u peer=%d op=%u bytes=%" PRIu64 " req=%" PRIu64 " root=%d",
                      kind, e.comm, e.peer, e.region, e.bytes, e.request, e.root);
      } else {
        std::snprintf(buf, sizeof buf, "%s", kind);
      }
      break;
  }
  return buf;
}

Status write_event_dump(const trace::ChunkStore& store, const defs::Definitions& definitions,
                        const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "we");
  if (!f) return Status::kIoError;
  for (uint16_t loc : store.locations()) {
    if (loc != 0) std::fprintf(f, "# location %u\n", unsigned(loc));
    trace::TraceReader r(store, loc);
    trace::Event e;
    r.seek_begin();
    while (r.next(e)) std::fprintf(f, "%s\n", format_event(e, definitions.regions).c_str());
  }
  const bool ok = std::fclose(f) == 0;
  return ok ? Status::kOk : Status::kIoError;
}

}  // namespace critpath::analyzer
