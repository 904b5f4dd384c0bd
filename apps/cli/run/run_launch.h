// Internal to the CLI: this process's place in a distributed launch of `tipbench run`. Under
// torchrun or srun (or as a rank that `--nproc` started) the environment makes it one rank; with
// --nproc N and no such variables it is the launcher of N local ranks. --nproc, --oversubscribe
// and --rendezvous-timeout are `run`'s own flags, not a suite's: docs/cli.md says why. Which suite
// runs across ranks is the distributed library's to say (distributed/run_role.h). Example:
//   if (auto problem = launch_problem(o, device)) return usage_error(*problem);
//   return launch_local_ranks(argv, o.nproc);
#pragma once

#include "run_options.h"
#include "distributed/rank_env.h"
#include "tipbench/measure/runner.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <vector>

namespace tipbench::cli {

// Why --nproc N cannot launch here: a suite other than the distributed one, or more ranks than
// devices (one per GPU) or cores (one per core, or kRanksPerCoreOversubscribed with --oversubscribe).
std::optional<std::string> launch_problem(const RunOptions& o, const c10::Device& device);

// Becomes the launcher of `nproc` local ranks of this same command; their exit code.
int launch_local_ranks(const std::vector<std::string>& argv, int nproc);

// A launched rank joins the run. Ranks 1..N-1 serve rank 0 until the run ends: their exit code;
// rank 0 gets nullopt and goes on to run the harness. Throws InputError.
std::optional<int> join_as_rank(const distributed::RankEnv& env, const RunPlan& plan, int rendezvous_timeout_s);

// Rank 0's end of the run: releases the other ranks (idempotent; a no-op outside a distributed run).
void end_distributed_run();

}  // namespace tipbench::cli
