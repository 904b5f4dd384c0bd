#include "distributed/rendezvous_store.h"

#include "tipbench/common/error_text.h"
#include "tipbench/results/result.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <c10/util/Logging.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace tipbench::distributed {

void quiet_c10d_warnings() {
  constexpr int kError = 2;  // c10's severities: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL
  if (std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr) FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, kError);
}

QuietRendezvous::QuietRendezvous() : before_(FLAGS_caffe2_log_level) {
  constexpr int kFatal = 3;
  if (std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr) FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, kFatal);
}

QuietRendezvous::~QuietRendezvous() { FLAGS_caffe2_log_level = before_; }

std::string store_host(const RankEnv& env) {
  if (env.launcher == "tipbench") return "the tipbench launcher";
  if (env.store_hosted) return "the torchrun agent";
  return "rank 0";
}

c10::intrusive_ptr<c10d::Store> connect_store(const RankEnv& env, bool host, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  options.isServer = host;
  options.numWorkers = std::nullopt;
  options.waitWorkers = false;
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    const std::string what = error_summary(e);
    const std::string details = error_details(e);  // the errno may sit below the first line
    if (host &&
        (details.find("EADDRINUSE") != std::string::npos || details.find("already in use") != std::string::npos)) {
      throw InputError(
          fmt::format("rank 0 cannot host the rendezvous store on {}:{}: the port is in use (another job, or a "
                      "previous run still exiting); pick a free MASTER_PORT",
                      env.master_addr, env.master_port));
    }
    throw InputError(fmt::format("rank {} cannot {} the rendezvous store on {}:{}: {}", env.rank,
                                 host ? "host" : "reach", env.master_addr, env.master_port, what));
  }
  // The connection attempt's timeout (short for a client that retries: reach_store) must not stay
  // the bound of every later blocking call, whose default it is (TCPStore::get -> doWait(key,
  // timeout_)): ProcessGroupNCCL's non-root ranks wait there for the NCCL id, rank 0 for the
  // metrics (review D7, 2026-11-28).
  store->setTimeout(std::max<std::chrono::milliseconds>(timeout, kStoreTimeout));
  if (!env.store_prefix.empty()) store = c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, store);
  return store;
}

c10::intrusive_ptr<c10d::Store> reach_store(const RankEnv& env, std::chrono::steady_clock::time_point deadline,
                                            std::chrono::seconds timeout) {
  constexpr std::chrono::milliseconds kAttempt{2000};
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      return connect_store(env, false, std::max(std::chrono::milliseconds(100), std::min(left, kAttempt)));
    } catch (const std::exception&) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw InputError(fmt::format(
            "rank {}: waited {} s (--rendezvous-timeout) for the rendezvous store at {}:{}, which {} hosts; it never "
            "came up (is it running, with this MASTER_ADDR and MASTER_PORT?)",
            env.rank, timeout.count(), env.master_addr, env.master_port, store_host(env)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

bool wait_for_key(c10d::Store& store, const std::string& key, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return store.check({key});
    try {
      store.wait({key}, std::min(left, std::chrono::milliseconds(1000)));
      return true;
    } catch (const c10::DistStoreError&) {  // this slice's timeout; a lost store is another error
    }
  }
}

}  // namespace tipbench::distributed
