// The run's c10d store (a TCPStore at MASTER_ADDR:MASTER_PORT, under torchrun's prefix when there
// is one): hosting it on rank 0, reaching it as a client until it answers, and keeping c10d's own
// logging quiet meanwhile. Example:
//   QuietRendezvous quiet;  // the failed attempts of a client that came early are expected
//   auto store = host ? connect_store(env, true) : reach_store(env, deadline, timeout);
#pragma once

#include "distributed/rank_env.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace tipbench::distributed {

// c10d logs every failed store call as a warning with a 30-frame C++ backtrace before it throws;
// a rank's own one-line error says the same. Raises c10's log level to ERROR unless the user set
// TORCH_CPP_LOG_LEVEL (then that wins). Called by the launcher and by every rank.
void quiet_c10d_warnings();

// c10d logs every failed connection attempt of the rendezvous (with a backtrace) before it
// throws; the wait has its own one-line outcome. FATAL only while this lives, unless the user set
// TORCH_CPP_LOG_LEVEL (NCCL's watchdog speaks at ERROR later, and should).
class QuietRendezvous {
 public:
  QuietRendezvous();
  ~QuietRendezvous();
  QuietRendezvous(const QuietRendezvous&) = delete;
  QuietRendezvous& operator=(const QuietRendezvous&) = delete;

 private:
  int before_;
};

// Who hosts the store, for messages about it: "the tipbench launcher", "the torchrun agent" or
// "rank 0".
std::string store_host(const RankEnv& env);

inline constexpr std::chrono::seconds kStoreTimeout{60};

// Hosts (`host`) or connects to the store. `timeout` bounds the connection attempt (a client's
// takes about twice it: c10d tries once more after a failed connect); the store's later blocking
// calls wait up to the larger of it and kStoreTimeout. Throws InputError: the port is in use, or the store cannot be
// hosted or reached.
c10::intrusive_ptr<c10d::Store> connect_store(const RankEnv& env, bool host,
                                              std::chrono::milliseconds timeout = kStoreTimeout);

// A client's connection attempts, each short, until the store answers; InputError when
// `deadline` passes first (`timeout`, --rendezvous-timeout, is what the message says was waited).
c10::intrusive_ptr<c10d::Store> reach_store(const RankEnv& env, std::chrono::steady_clock::time_point deadline,
                                            std::chrono::seconds timeout);

// The store's blocking wait for one key, until `deadline`; false when it passed first. In
// slices, so that a key that never comes costs no more than the deadline.
bool wait_for_key(c10d::Store& store, const std::string& key, std::chrono::steady_clock::time_point deadline);

}  // namespace tipbench::distributed
