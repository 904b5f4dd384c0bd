// The process's place in a distributed run, a thin front over its pieces: the rendezvous
// (rendezvous.h: the store, every rank in, the layout), the leader/follower command channel
// (command_channel.h, Gloo), the heartbeat watchdog (watchdog.h) and the gradient process group
// (NCCL for CUDA gradients, else Gloo). One per process, started once (a launched rank at
// start-up; a world-size-1 run on the first ddp trial). Example:
//   auto& s = Session::start(*rank_env, device);             // every rank
//   if (s.leader()) s.send(Op::step); else auto [op, payload] = s.receive();
//   DdpReducer ddp(*module, s.gradient_group(), {});        // PyTorch's DDP on the gradient group
//
// Failure model: a rank that dies or stops (SIGSTOP, a hung node) stops updating its heartbeat;
// within kStaleAfter the others print "rank R stopped responding ..." and exit with
// exit_code::failed from the watchdog thread, so no result is written. A collective that fails
// or times out first (Gloo sees a closed socket at once) waits for the watchdog to name the rank,
// else names the rank that made the least progress.
#pragma once

#include "distributed/command_channel.h"
#include "distributed/rank_env.h"
#include "distributed/rendezvous.h"
#include "distributed/rendezvous_store.h"
#include "distributed/watchdog.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tipbench::distributed {

inline constexpr std::chrono::seconds kCollectiveTimeout{30};

class Session {
 public:
  // Joins the run `env` describes: connects to (or hosts) the store, waits for every rank, builds
  // the groups, starts the watchdog. The store and the other ranks get one wait of
  // `rendezvous_timeout` in all (c10d's own messages quiet meanwhile). At the rendezvous every
  // rank tells the others its host, node, GPU and `run` (what it was asked to run). Throws
  // InputError for a port in use, naming what did not come in time (the store, or which ranks
  // on which nodes), for ranks whose `run` differs from rank 0's, for two ranks on one GPU and
  // for more ranks on a node than it shows GPUs (NCCL needs one GPU per rank).
  static Session& start(const RankEnv& env, const c10::Device& device,
                        std::chrono::seconds rendezvous_timeout = kDefaultRendezvousTimeout,
                        const nlohmann::json& run = nlohmann::json::object());
  // The running session, else a world-size-1 one (an in-process store, no watchdog).
  static Session& current_or_solo(const c10::Device& device);
  static Session* current();

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  bool leader() const { return env_.rank == 0; }
  const RankEnv& env() const { return env_; }
  // This rank's device: cuda:LOCAL_RANK when the run is on CUDA, else the CPU.
  const c10::Device& device() const { return device_; }
  std::string backend_name() const { return gradients_->getBackendName(); }
  // How the gradients travel: "gloo: 10.0.0.2 (this host's route to MASTER_ADDR ...)", "nccl: ...".
  const std::string& transport() const { return rendezvous_.transport(); }
  // {"nodes", "ranks_per_node", "hosts"} as the ranks reported them at the rendezvous.
  const nlohmann::json& layout() const { return rendezvous_.layout(); }

  // The gradient backend (NCCL on CUDA, Gloo on the CPU) as the ProcessGroup that c10d::Reducer
  // and c10d's collectives take, registered for this rank's device type as
  // torch.distributed.init_process_group registers its backend.
  const c10::intrusive_ptr<c10d::ProcessGroup>& gradient_group() const { return gradient_group_; }

  // The command channel's (command_channel.h): the leader sends, followers receive.
  void send(Op op, const std::string& payload = "") { channel_->send(op, payload); }
  std::pair<Op, std::string> receive() { return channel_->receive(); }
  void publish_metrics(const std::map<std::string, double>& metrics) { channel_->publish_metrics(metrics); }
  std::vector<std::map<std::string, double>> collect_metrics() { return channel_->collect_metrics(); }

  // The watchdog's (watchdog.h): progress for naming a hanging rank, a failed collective's
  // culprit, and the end of the run (every rank: ranks may then exit at their own pace).
  void note_progress() { watchdog_.note_progress(); }
  [[noreturn]] void peer_failed(const std::string& what) { watchdog_.peer_failed(what); }
  void stop_watchdog() { watchdog_.stop(); }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

 private:
  Session(RankEnv env, c10::Device device);
  void connect(std::chrono::seconds rendezvous_timeout, const nlohmann::json& run);
  void connect_alone();
  void make_gradient_group();

  RankEnv env_;
  c10::Device device_;
  Rendezvous rendezvous_;
  Watchdog watchdog_;
  std::optional<CommandChannel> channel_;  // built once the rendezvous has the store
  c10::intrusive_ptr<c10d::Backend> gradients_;
  c10::intrusive_ptr<c10d::ProcessGroup> gradient_group_;
};

}  // namespace tipbench::distributed
