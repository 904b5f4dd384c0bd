// What `tipbench run` does in a launched rank (RANK/WORLD_SIZE or SLURM_* set). Rank 0 is the
// leader: it runs the harness as usual and its data-parallel workloads drive the others; ranks
// 1..N-1 are followers: they build and step the same workloads on command and never write a
// result. Example (apps/cli/run/run_command.cpp):
//   if (auto code = join_distributed_run(*env, suites, context)) return *code;   // a follower
//   ... run the harness, then end_distributed_run();
#pragma once

#include "distributed/rank_env.h"
#include "tipbench/suite/suite.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <vector>

namespace tipbench::distributed {

// The suite a distributed launch runs; any other selection is an InputError.
inline constexpr const char* kDistributedSuite = "data_parallel";

// Joins the run (store, process groups, watchdog) and, on a CPU, gives each local rank its
// share of the cores (intra-op threads = cores / local ranks). A follower then serves the
// leader until the run ends and returns its exit code; the leader gets nullopt. `run` is what
// this rank was asked to run (suite, options, settings): every rank must agree with rank 0's.
// Throws InputError (Session::start): a selection other than the data_parallel suite, a port in
// use, a store or ranks that did not come within `rendezvous_timeout`, ranks that disagree on
// `run`, and a layout that gives two ranks one GPU.
std::optional<int> join_distributed_run(const RankEnv& env, const std::vector<const Suite*>& suites,
                                        const SuiteContext& context, std::chrono::seconds rendezvous_timeout,
                                        const nlohmann::json& run);

// The leader's end of the run: releases the followers (idempotent; a no-op outside a run).
void end_distributed_run();

}  // namespace tipbench::distributed
