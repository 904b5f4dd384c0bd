// The heartbeat watchdog: every kHeartbeatPeriod each rank writes "BEAT PROGRESS" to its key
// hb/RANK and reads the others'. A rank whose beat has not changed for kStaleAfter died or stopped
// (SIGSTOP, a hung node): this rank names it and exits (exit_code::failed) from the watchdog's
// thread. A collective that failed first waits for that verdict, else names the rank that made
// the least progress. Example:
//   Watchdog watchdog(env);
//   watchdog.arm(store);  // then every rank's barrier, then
//   watchdog.start();
//   try { work->wait(); } catch (const std::exception& e) { watchdog.peer_failed(error_summary(e)); }
#pragma once

#include "distributed/rank_env.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace tipbench::distributed {

inline constexpr std::chrono::seconds kHeartbeatPeriod{1};
inline constexpr std::chrono::seconds kStaleAfter{10};

class Watchdog {
 public:
  explicit Watchdog(RankEnv env);
  // Publishes this rank's first heartbeat on `store` (a connection of its own), before the ranks'
  // barrier, so that every key exists when any watchdog reads it.
  void arm(c10::intrusive_ptr<c10d::Store> store);
  // Starts beating and watching, on a thread of its own, when there are other ranks.
  void start();

  // The main thread's progress (steps and commands), published with the heartbeat so that a
  // rank hanging with a live process can still be named.
  void note_progress() { progress_.fetch_add(1, std::memory_order_relaxed); }

  // A collective failed or timed out: name the culprit and exit (exit_code::failed).
  [[noreturn]] void peer_failed(const std::string& what);
  // No more heartbeat checks, so ranks may exit at their own pace. Safe from the watchdog's thread.
  void stop();

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() { stop(); }

 private:
  void watch();

  RankEnv env_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::atomic<std::int64_t> progress_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tipbench::distributed
