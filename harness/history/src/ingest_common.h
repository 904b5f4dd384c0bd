// Internal to the history library: what both stores (SQLite, PostgreSQL) record about an ingest.
#pragma once

#include <string>

namespace tipbench {
struct Result;
}

namespace tipbench::history {

std::string utc_now();                         // "2026-11-26T13:31:02Z"
std::string model_sha256_of(const Result& r);  // a model file's SHA-256; "" for the reference models

// Test knob (docs/history.md): the process kills itself (SIGKILL) after this many samples of an
// ingest, inside its transaction, so the tests can show that a killed ingest leaves nothing. -1: off.
long die_after_samples();

}  // namespace tipbench::history
