// Internal to the CLI: `run --instructions callgrind`. This same command starts again as a child
// under Valgrind's Callgrind (instrumentation off until a counted step switches it on, children
// not traced, one OpenMP thread with a passive wait policy, as torch.utils.benchmark's
// collect_callgrind runs; oneDNN held to kernels without FMA, which Valgrind emulates slowly),
// which counts each arm's instructions (profiling/instruction_counter.h)
// and writes the result; this process passes its exit code on. Example:
//   if (auto code = run_under_callgrind_if_asked(o, device, argv)) return *code;
#pragma once

#include "run_options.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <vector>

namespace tipbench::cli {

// oneDNN's ISA cap (its documented run-time control) and the one a run under Callgrind gets when
// the user set none: the widest without FMA.
inline constexpr const char* kOneDnnIsaVariable = "ONEDNN_MAX_CPU_ISA";
inline constexpr const char* kOneDnnIsaUnderCallgrind = "AVX";

// Why this run cannot count under Callgrind (a GPU, --count-steps 0, a distributed run, no
// valgrind on PATH), or nullopt.
std::optional<std::string> callgrind_problem(const RunOptions& o, const c10::Device& device);

// True in the child that run started under Callgrind.
bool inside_callgrind_run();

// Starts the child (argv: this process's, argv[0] included) and waits for it; its exit code.
int run_under_callgrind(const std::vector<std::string>& argv);

}  // namespace tipbench::cli
