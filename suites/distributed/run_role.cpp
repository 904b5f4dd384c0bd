#include "distributed/run_role.h"

#include "distributed/session.h"
#include "distributed/test_fault.h"
#include "tipbench/common/error_text.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tipbench::distributed {

namespace {

// The case and arm a prepare message names, rebuilt from this rank's own suite and context.
struct PreparedArm {
  CaseSpec c;
  ArmSpec arm;
  TrialInfo trial;
};

PreparedArm find_arm(const Suite& suite, const SuiteContext& context, const std::string& message) {
  const auto j = nlohmann::json::parse(message);
  const TrialInfo trial{.block = j.at("block").get<int>(), .position = j.at("position").get<int>()};
  Levels params;
  for (const auto& kv : j.at("params")) params.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  const auto arm_name = j.at("arm").get<std::string>();
  for (const auto& c : suite.cases(context)) {
    if (c.params != params) continue;
    for (const auto& arm : c.arms) {
      if (arm.name == arm_name) return {c, arm, trial};
    }
  }
  throw std::runtime_error(fmt::format("rank 0 asked for an arm this rank does not have: {}", message));
}

int serve(const Suite& suite, const SuiteContext& context) {
  Session& session = *Session::current();
  std::unique_ptr<Workload> workload;
  auto need = [&]() -> Workload& {
    if (!workload) throw std::logic_error("a command arrived before prepare");
    return *workload;
  };
  while (true) {
    auto [op, payload] = session.receive();
    switch (op) {
      case Op::prepare: {
        workload.reset();
        const auto [c, arm, trial] = find_arm(suite, context, payload);
        torch::manual_seed(context.seed);  // as run_trial does on rank 0: the same weights and data
        workload = suite.prepare(context, c, arm, trial);
        break;
      }
      case Op::step:
        count_step_for_test_fault(session.rank());
        need().step();
        break;
      case Op::begin_measurement: need().begin_measurement(); break;
      case Op::metrics: session.publish_metrics(need().metrics()); break;
      case Op::release: workload.reset(); break;
      case Op::end: session.stop_watchdog(); return 0;
      default: throw std::runtime_error(fmt::format("unknown command {} from rank 0", static_cast<long long>(op)));
    }
  }
}

}  // namespace

std::optional<int> join_distributed_run(const RankEnv& env, const std::vector<const Suite*>& suites,
                                        const SuiteContext& context, std::chrono::seconds rendezvous_timeout,
                                        const nlohmann::json& run) {
  if (suites.size() != 1 || suites[0]->name() != kDistributedSuite) {
    throw InputError(
        fmt::format("a distributed launch ({} ranks) runs only --suite {}", env.world_size, kDistributedSuite));
  }
  if (!context.device.is_cuda()) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    torch::set_num_threads(std::max(1, cores / std::max(1, env.local_world_size)));
  }
  Session& session = Session::start(env, context.device, rendezvous_timeout, run);
  if (session.leader()) return std::nullopt;
  try {
    return serve(*suites[0], context);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: rank {}: {}\n", env.rank, error_summary(e));
    std::fflush(stderr);
    std::_Exit(1);  // the others see this rank's heartbeat stop and name it
  }
}

void end_distributed_run() {
  Session* session = Session::current();
  if (session == nullptr || !session->leader() || session->world_size() == 1) return;
  static bool ended = false;
  if (ended) return;
  ended = true;
  session->stop_watchdog();
  session->send(Op::end);
}

}  // namespace tipbench::distributed
