// Internal: the first call's fixtures (docs/gpu.md, "The first call"). With TIPBENCH_FIXTURE_DIR
// set, every trial writes there what its CUDA logic read, as the plain values the CPU tests feed
// that logic: the memory probe's allocator readings ("allocator") and, under --explain, the
// profiled steps' events ("profiled"). One JSON file each, written atomically; after 48 MiB in
// one process the rest are left out (a device call brings back 64 MiB). Unset: nothing is
// written and nothing is serialised.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tipbench::detail {

bool fixtures_wanted();
// `<dir>/<kind>.<arm as a file stem>.b<block>.p<pid>.json`; a failure to write is reported on
// stderr once and never fails the trial.
void record_fixture(const std::string& kind, const std::string& arm_name, int block,
                    const nlohmann::ordered_json& content);

}  // namespace tipbench::detail
