// Test seams of the history store: hooks a test sets to reach a moment no user can. Production
// code never sets them.
//   tipbench::history::testing::set_ingest_probe([](std::size_t) { raise(SIGKILL); });
#pragma once

#include <cstddef>

namespace tipbench::history::testing {

// Called inside every ingest's write transaction once its samples are written, before it commits
// (the tests kill the process there: a killed ingest leaves nothing). Null, the default: none.
using IngestProbe = void (*)(std::size_t samples_written);
void set_ingest_probe(IngestProbe probe);

}  // namespace tipbench::history::testing
