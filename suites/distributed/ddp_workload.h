// The `ddp` and `ddp_no_overlap` arms: one rank's share of a data-parallel training step. Every
// rank builds the same model (same seed; rank 0's parameters and buffers are broadcast anyway,
// as PyTorch's DDP does), trains on its slice of one global batch (world size x per-rank batch)
// and averages the gradients through PyTorch's own DDP machinery (DdpReducer: c10d::Reducer with
// DDP's defaults, buffers broadcast from rank 0 before every forward). On rank 0 (the leader,
// which runs the harness) every call is first sent to the followers, so the whole group runs
// each warm-up and timed step together.
// Example:
//   auto w = make_ddp_workload(context, c, arm, {.training = spec, .ddp = {.overlap = true}});
#pragma once

#include "common/training.h"
#include "distributed/ddp_reducer.h"
#include "tipbench/suite/suite.h"

#include <memory>

namespace tipbench::distributed {

struct DdpSpec {
  suites::TrainingSpec training;  // model and per-rank batch
  DdpOptions ddp;
  TrialInfo trial;  // passed on to the followers' prepare
};

// The message that makes every follower prepare the same case, arm and trial.
nlohmann::json prepare_message(const CaseSpec& c, const ArmSpec& arm, const TrialInfo& trial);

std::unique_ptr<Workload> make_ddp_workload(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                            const DdpSpec& spec);

}  // namespace tipbench::distributed
