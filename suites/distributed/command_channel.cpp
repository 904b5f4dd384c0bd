#include "distributed/command_channel.h"

#include "distributed/rank_exit.h"
#include "tipbench/common/error_text.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tipbench::distributed {

namespace {

std::string metrics_key(std::int64_t seq, int rank) { return fmt::format("metrics/{}/{}", seq, rank); }

}  // namespace

CommandChannel::CommandChannel(RankEnv env, c10::intrusive_ptr<c10d::Store> store, const GlooEndpoint& endpoint,
                               Watchdog& watchdog)
    : env_(std::move(env)), store_(std::move(store)), watchdog_(watchdog) {
  control_ =
      make_gloo_group(c10::make_intrusive<c10d::PrefixStore>("control", store_), env_.rank, env_.world_size, endpoint);
  // Followers wait on commands while the leader runs other arms: no collective timeout there.
  control_->setTimeout(std::chrono::hours(24 * 7));
  command_ = at::zeros({2}, at::kLong);
}

CommandChannel::~CommandChannel() {
  if (last_command_) {
    try {
      last_command_->wait();
    } catch (const std::exception&) {
    }
  }
}

void CommandChannel::send(Op op, const std::string& payload) {
  if (env_.world_size == 1) return;
  if (last_command_) last_command_->wait();  // the tensor is reused
  ++seq_;
  if (!payload.empty()) store_->set(fmt::format("cmd/{}", seq_), payload);
  command_[0] = static_cast<std::int64_t>(op);
  command_[1] = seq_;
  std::vector<at::Tensor> tensors{command_};
  try {
    last_command_ = control_->broadcast(tensors, c10d::BroadcastOptions{});
    if (op == Op::end) last_command_->wait();  // delivered before the leader exits
  } catch (const std::exception& e) {
    watchdog_.peer_failed(error_summary(e));
  }
  watchdog_.note_progress();
}

std::pair<Op, std::string> CommandChannel::receive() {
  std::vector<at::Tensor> tensors{command_};
  try {
    control_->broadcast(tensors, c10d::BroadcastOptions{})->wait();
  } catch (const std::exception& e) {
    watchdog_.peer_failed(error_summary(e));
  }
  watchdog_.note_progress();
  const auto op = static_cast<Op>(command_[0].item<std::int64_t>());
  seq_ = command_[1].item<std::int64_t>();
  std::string payload;
  try {
    if (op == Op::prepare) payload = store_->get_to_str(fmt::format("cmd/{}", seq_));
  } catch (const std::exception& e) {
    exit_lost_store(env_, e);
  }
  return {op, payload};
}

void CommandChannel::publish_metrics(const std::map<std::string, double>& metrics) {
  store_->set(metrics_key(seq_, env_.rank), nlohmann::json(metrics).dump());
}

std::vector<std::map<std::string, double>> CommandChannel::collect_metrics() {
  std::vector<std::map<std::string, double>> all(env_.world_size);
  for (int r = 1; r < env_.world_size; ++r) {
    const std::string key = metrics_key(seq_, r);
    try {
      all[r] = nlohmann::json::parse(store_->get_to_str(key)).get<std::map<std::string, double>>();
      store_->deleteKey(key);
    } catch (const std::exception& e) {
      watchdog_.peer_failed(fmt::format("rank {} sent no measurements: {}", r, error_summary(e)));
    }
  }
  return all;
}

void CommandChannel::barrier() { control_->barrier()->wait(); }

}  // namespace tipbench::distributed
