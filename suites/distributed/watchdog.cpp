#include "distributed/watchdog.h"

#include "distributed/rank_exit.h"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace tipbench::distributed {

namespace {

std::string heartbeat_key(int rank) { return fmt::format("hb/{}", rank); }

}  // namespace

Watchdog::Watchdog(RankEnv env) : env_(std::move(env)) {}

void Watchdog::arm(c10::intrusive_ptr<c10d::Store> store) {
  store_ = std::move(store);
  store_->set(heartbeat_key(env_.rank), std::string("0 0"));
}

void Watchdog::start() {
  if (env_.world_size > 1) thread_ = std::thread([this] { watch(); });
}

void Watchdog::watch() {
  struct Seen {
    std::string beat;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Seen> seen(env_.world_size, {"", std::chrono::steady_clock::now()});
  std::int64_t beat = 0;
  while (!stop_.load()) {
    try {
      store_->set(heartbeat_key(env_.rank), fmt::format("{} {}", ++beat, progress_.load()));
      const auto now = std::chrono::steady_clock::now();
      for (int r = 0; r < env_.world_size; ++r) {
        if (r == env_.rank) continue;
        std::string value = store_->get_to_str(heartbeat_key(r));
        const std::string this_beat = value.substr(0, value.find(' '));
        if (this_beat != seen[r].beat) {
          seen[r] = {this_beat, now};
        } else if (now - seen[r].since > kStaleAfter && !stop_.load()) {
          exit_failed(env_.rank,
                      fmt::format("rank {} stopped responding (no heartbeat for {} s): it died or hangs", r,
                                  std::chrono::duration_cast<std::chrono::seconds>(now - seen[r].since).count()));
        }
      }
    } catch (const std::exception& e) {
      if (stop_.load()) return;
      exit_lost_store(env_, e);
    }
    std::this_thread::sleep_for(kHeartbeatPeriod);
  }
}

void Watchdog::peer_failed(const std::string& what) {
  if (env_.world_size > 1 && thread_.joinable()) {
    // The watchdog names a dead or stopped rank within kStaleAfter and exits the process.
    std::this_thread::sleep_for(kStaleAfter + 3 * kHeartbeatPeriod);
    // Everyone still beats: some rank hangs inside the run. The one with least progress is it.
    int slowest = -1;
    long long least = 0;
    try {
      for (int r = 0; r < env_.world_size; ++r) {
        const std::string value = store_->get_to_str(heartbeat_key(r));
        const long long progress = std::atoll(value.substr(value.find(' ') + 1).c_str());
        if (slowest < 0 || progress < least) slowest = r, least = progress;
      }
    } catch (const std::exception&) {
    }
    if (slowest >= 0) {
      exit_failed(env_.rank, fmt::format("rank {} hangs (least progress) and a collective failed: {}", slowest, what));
    }
  }
  exit_failed(env_.rank, fmt::format("a collective failed: {}", what));
}

void Watchdog::stop() {
  stop_.store(true);
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

}  // namespace tipbench::distributed
