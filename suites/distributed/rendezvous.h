// The start of a distributed run: this rank hosts or reaches the store, says where it is (host,
// node, GPU and its run: rank_places.h) and waits for every other rank; rank 0's verdict on those
// places gives every rank the layout, or one line on what is wrong. Also where Gloo binds and how
// the gradients travel, for the groups built next and for the result. Example:
//   Rendezvous rdzv(env, device);
//   rdzv.join(kDefaultRendezvousTimeout, run);  // throws InputError
//   auto control = make_gloo_group(rdzv.store(), env.rank, env.world_size, rdzv.endpoint());
#pragma once

#include "distributed/groups.h"
#include "distributed/rank_env.h"
#include "distributed/rank_places.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace tipbench::distributed {

// How long a rank waits at the start for the rendezvous store and for every rank to join
// (`run --rendezvous-timeout`).
inline constexpr std::chrono::seconds kDefaultRendezvousTimeout{60};

class Rendezvous {
 public:
  Rendezvous(RankEnv env, c10::Device device);

  // Hosts (rank 0, unless a launcher does) or reaches the store and waits for every rank: one
  // wait of `timeout` in all, c10d's own messages quiet meanwhile. Every rank tells the others
  // `run` (what it was asked to run). Throws InputError for a port in use, naming what did not
  // come in time (the store, or which ranks on which nodes), for ranks whose `run` differs from
  // rank 0's and for two ranks on one GPU.
  void join(std::chrono::seconds timeout, const nlohmann::json& run);
  // A world-size-1 run: an in-process store, Gloo on loopback, nobody to wait for.
  void join_alone();

  // The store (torchrun's prefix applied), and the watchdog's own connection to it (none when
  // alone): a heartbeat never queues behind a blocked `get`.
  const c10::intrusive_ptr<c10d::Store>& store() const { return store_; }
  const c10::intrusive_ptr<c10d::Store>& watchdog_store() const { return watchdog_store_; }
  // Where Gloo's TCP transport binds (the control group, and the gradients on the CPU).
  const GlooEndpoint& endpoint() const { return endpoint_; }
  // How the gradients travel: "gloo: 10.0.0.2 (this host's route to MASTER_ADDR ...)", "nccl: ...".
  const std::string& transport() const { return transport_; }
  // {"nodes", "ranks_per_node", "hosts"} as the ranks reported them.
  const nlohmann::json& layout() const { return layout_; }

 private:
  void wait_for_every_rank(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout,
                           const RankPlace& place);
  void agree_on_places();

  RankEnv env_;
  c10::Device device_;
  c10::intrusive_ptr<c10d::Store> store_, watchdog_store_;
  GlooEndpoint endpoint_;
  std::string transport_;
  nlohmann::json layout_;
};

}  // namespace tipbench::distributed
