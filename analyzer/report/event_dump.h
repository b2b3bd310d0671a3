// critpath — analyzer/report/event_dump.h
//
// A readable dump of one rank's recorded events (CRITPATH_DUMP_EVENTS=1), for tests and for
// debugging. One event per line, no timestamps, so a test can compare sequences exactly:
//   ENTER MPI_Send | SEND peer=1 tag=5 comm=0 bytes=40 | ISEND ... req=3 | IRECV_REQUEST req=4
//   COLL_BEGIN | COLL_END op=MPI_Bcast comm=0 root=0 sent=40 recv=40 | ...
// Location 0 (the MPI_Init thread) comes first; further threads follow after a line
// "# location <n>".
#pragma once

#include <string>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer {

// Formats one event (without a newline); region and op names resolved through `regions`.
std::string format_event(const trace::Event& e, const defs::RegionTable& regions);
// `definitions`: the ones the events of `store` refer to.
Status write_event_dump(const trace::ChunkStore& store, const defs::Definitions& definitions,
                        const std::string& path);

}  // namespace critpath::analyzer
