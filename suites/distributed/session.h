// The process's place in a distributed run: the rendezvous store, the process groups (Gloo for
// control and CPU gradients, NCCL for CUDA gradients), the leader/follower command channel and a
// heartbeat watchdog. One per process, started once (a launched rank at start-up; a world-size-1
// run on the first ddp trial). Example:
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

#include "distributed/groups.h"
#include "distributed/rank_env.h"
#include "distributed/rank_places.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tipbench::distributed {

// What the leader (rank 0, which runs the harness) tells the followers to do.
enum class Op : std::int64_t { prepare = 1, step, begin_measurement, metrics, release, end };

inline constexpr std::chrono::seconds kHeartbeatPeriod{1};
inline constexpr std::chrono::seconds kStaleAfter{10};
inline constexpr std::chrono::seconds kCollectiveTimeout{30};
// How long a rank waits at the start for the rendezvous store and for every rank to join
// (`run --rendezvous-timeout`).
inline constexpr std::chrono::seconds kDefaultRendezvousTimeout{60};

// c10d logs every failed store call as a warning with a 30-frame C++ backtrace before it throws;
// a rank's own one-line error says the same. Raises c10's log level to ERROR unless the user set
// TORCH_CPP_LOG_LEVEL (then that wins). Called by the launcher and by every rank.
void quiet_c10d_warnings();

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
  const std::string& transport() const { return transport_; }
  // {"nodes", "ranks_per_node", "hosts"} as the ranks reported them at the rendezvous.
  const nlohmann::json& layout() const { return layout_; }

  // The gradient backend (NCCL on CUDA, Gloo on the CPU) as the ProcessGroup that c10d::Reducer
  // and c10d's collectives take, registered for this rank's device type as
  // torch.distributed.init_process_group registers its backend.
  const c10::intrusive_ptr<c10d::ProcessGroup>& gradient_group() const { return gradient_group_; }

  // Leader: sends a command (and its payload) to every follower. Asynchronous: the broadcast
  // completes while the leader already runs the step.
  void send(Op op, const std::string& payload = "");
  // Follower: blocks until the next command.
  std::pair<Op, std::string> receive();
  // A follower's measurements for the leader's `metrics` command (sequence number `seq`).
  void publish_metrics(const std::map<std::string, double>& metrics);
  // Leader: every rank's measurements, indexed by rank (rank 0's entry left empty).
  std::vector<std::map<std::string, double>> collect_metrics();

  // The main thread's progress (steps and commands), published with the heartbeat so that a
  // rank hanging with a live process can still be named.
  void note_progress() { progress_.fetch_add(1, std::memory_order_relaxed); }

  // A collective failed or timed out: name the culprit and exit (exit_code::failed).
  [[noreturn]] void peer_failed(const std::string& what);
  // End of the run (every rank): no more heartbeat checks, so ranks may exit at their own pace.
  void stop_watchdog();

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

 private:
  Session(RankEnv env, c10::Device device);
  void connect(std::chrono::seconds rendezvous_timeout, const nlohmann::json& run);
  void reach_store(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout);
  void wait_for_every_rank(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout,
                           const RankPlace& place);
  void agree_on_places();
  void make_gradient_group(const c10::intrusive_ptr<c10d::Store>& store);
  void watch();
  [[noreturn]] void fail(const std::string& message);
  [[noreturn]] void lost_store(const std::exception& e);

  RankEnv env_;
  c10::Device device_;
  c10::intrusive_ptr<c10d::Store> store_, watchdog_store_;
  c10::intrusive_ptr<c10d::Backend> control_, gradients_;
  c10::intrusive_ptr<c10d::ProcessGroup> gradient_group_;
  c10::intrusive_ptr<c10d::Work> last_command_;
  std::string transport_;
  nlohmann::json layout_;
  at::Tensor command_;
  std::int64_t seq_ = 0;
  std::atomic<std::int64_t> progress_{0};
  std::atomic<bool> stop_{false};
  std::thread watchdog_;
};

}  // namespace tipbench::distributed
