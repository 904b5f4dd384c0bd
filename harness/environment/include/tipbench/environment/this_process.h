// What this process knows of itself: its executable, its host and the time in the forms the
// results and file names use. Core: no LibTorch.
//   const std::string dir = "results/gate/" + tipbench::compact_utc_timestamp();
#pragma once

#include <string>

namespace tipbench {

// "20261121T091403Z": sortable, filesystem-safe UTC time for file names.
std::string compact_utc_timestamp();
// "2026-11-21T09:14:03Z": UTC time as results and stores record it.
std::string utc_timestamp();
std::string host_name();
// Absolute path of the running executable (/proc/self/exe); "" when it cannot be read.
std::string self_executable_path();

}  // namespace tipbench
