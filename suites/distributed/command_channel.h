// Rank 0's commands to the other ranks: the op and its sequence number travel as one broadcast
// on the Gloo control group; a payload (prepare's arm) and the followers' measurements go through
// the store under that number. A failed broadcast is the watchdog's to explain. Example:
//   CommandChannel channel(env, store, endpoint, watchdog);
//   if (env.rank == 0) channel.send(Op::step); else auto [op, payload] = channel.receive();
#pragma once

#include "distributed/groups.h"
#include "distributed/rank_env.h"
#include "distributed/watchdog.h"

#include <ATen/Tensor.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tipbench::distributed {

// What the leader (rank 0, which runs the harness) tells the followers to do.
enum class Op : std::int64_t { prepare = 1, step, begin_measurement, metrics, release, end };

class CommandChannel {
 public:
  // Builds the control group on `store` (under the prefix "control"), bound at `endpoint`.
  CommandChannel(RankEnv env, c10::intrusive_ptr<c10d::Store> store, const GlooEndpoint& endpoint, Watchdog& watchdog);
  // Waits for the last command: its tensor must outlive the broadcast.
  ~CommandChannel();
  CommandChannel(const CommandChannel&) = delete;
  CommandChannel& operator=(const CommandChannel&) = delete;

  // Leader: sends a command (and its payload) to every follower. Asynchronous: the broadcast
  // completes while the leader already runs the step.
  void send(Op op, const std::string& payload = "");
  // Follower: blocks until the next command.
  std::pair<Op, std::string> receive();
  // A follower's measurements for the leader's latest `metrics` command.
  void publish_metrics(const std::map<std::string, double>& metrics);
  // Leader: every rank's measurements, indexed by rank (rank 0's entry left empty).
  std::vector<std::map<std::string, double>> collect_metrics();
  // Every rank waits here until all are.
  void barrier();

 private:
  RankEnv env_;
  c10::intrusive_ptr<c10d::Store> store_;
  Watchdog& watchdog_;
  c10::intrusive_ptr<c10d::Backend> control_;
  c10::intrusive_ptr<c10d::Work> last_command_;
  at::Tensor command_;
  std::int64_t seq_ = 0;
};

}  // namespace tipbench::distributed
