#include "distributed/rendezvous.h"

#include "distributed/rendezvous_store.h"
#include "tipbench/results/result.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <ATen/cuda/CUDAContext.h>
#include <fmt/format.h>

#include <thread>

#include <unistd.h>

namespace tipbench::distributed {

namespace {

constexpr const char* kArrived = "rdzv/arrived";         // a count: every rank adds 1
constexpr const char* kAllArrived = "rdzv/all_arrived";  // set by the rank whose add made it world size
constexpr const char* kVerdict = "rdzv/verdict";         // rank 0's: the layout, and a problem if any
constexpr const char* kVerdictRead = "rdzv/verdict_read";

std::string joined_key(int rank) { return fmt::format("rdzv/joined/{}", rank); }

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("(unknown host)");
}

// The GPU's UUID as nvidia-smi prints it ("GPU-8-4-4-4-12" hex): the same physical GPU under
// any CUDA_VISIBLE_DEVICES numbering. PyTorch's torch.cuda.get_device_properties(i).uuid.
std::string gpu_uuid(c10::DeviceIndex index) {
  const auto& bytes = at::cuda::getDeviceProperties(index)->uuid.bytes;
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", static_cast<unsigned char>(bytes[i]));
  }
  return "GPU-" + hex;
}

std::string transport_text(const c10::Device& device, const GlooEndpoint& endpoint) {
  return device.is_cuda() ? "nccl: " + nccl_transport_text() : "gloo: " + endpoint.text;
}

}  // namespace

Rendezvous::Rendezvous(RankEnv env, c10::Device device) : env_(std::move(env)), device_(device) {}

void Rendezvous::join(std::chrono::seconds timeout, const nlohmann::json& run) {
  const RankPlace place{.rank = env_.rank,
                        .node = env_.node_rank,
                        .host = host_name(),
                        .gpu = device_.is_cuda() ? gpu_uuid(device_.index()) : std::string(),
                        .run = run};
  const bool host = !env_.store_hosted && env_.rank == 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  {
    QuietRendezvous quiet;
    store_ = host ? connect_store(env_, true) : reach_store(env_, deadline, timeout);
    watchdog_store_ = connect_store(env_, false);
    wait_for_every_rank(deadline, timeout, place);
  }
  endpoint_ = gloo_endpoint(env_.master_addr, env_.master_port);
  transport_ = transport_text(device_, endpoint_);
}

void Rendezvous::join_alone() {
  store_ = c10::make_intrusive<c10d::HashStore>();
  endpoint_ = gloo_endpoint("127.0.0.1", 0);
  transport_ = transport_text(device_, endpoint_);
  layout_ = layout_of({{.rank = 0, .node = 0, .host = host_name()}}, 1);
}

// Every rank says it is here; all wait (one deadline with the store's) until all are, so the
// process groups that follow find every peer at once, and a missing rank is named. As
// torch.distributed's _store_based_barrier (distributed_c10d.py) counts arrivals: one add per
// rank, and the rank that completes the count sets a key the others wait on, so the store sees
// O(1) calls per rank, not one poll of every key by every rank.
void Rendezvous::wait_for_every_rank(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout,
                                     const RankPlace& place) {
  store_->set(joined_key(env_.rank), to_json(place).dump());
  if (store_->add(kArrived, 1) == env_.world_size) store_->set(kAllArrived, std::string("1"));
  if (!wait_for_key(*store_, kAllArrived, deadline)) {
    std::vector<int> missing;
    for (int r = 0; r < env_.world_size; ++r) {
      if (!store_->check({joined_key(r)})) missing.push_back(r);
    }
    throw InputError(
        fmt::format("rank {}: waited {} s (--rendezvous-timeout) for {} of {} to join the rendezvous "
                    "at {}:{}; {} never came",
                    env_.rank, timeout.count(), missing_ranks_text(missing, env_), env_.world_size, env_.master_addr,
                    env_.master_port, missing.size() == 1 ? "it" : "they"));
  }
  agree_on_places();
}

// Rank 0 alone reads every place (one multiGet) and publishes its verdict: the layout, and the
// problem when the ranks disagree on the run or share a GPU; every rank then says the same one
// line. On a problem, the rank hosting the store waits (briefly) until the others have read the
// verdict, so that each says that line and not "lost the rendezvous store".
void Rendezvous::agree_on_places() {
  nlohmann::json verdict;
  if (env_.rank == 0) {
    std::vector<std::string> keys;
    for (int r = 0; r < env_.world_size; ++r) keys.push_back(joined_key(r));
    std::vector<RankPlace> places;
    for (const auto& bytes : store_->multiGet(keys)) {
      places.push_back(rank_place_from_json(nlohmann::json::parse(std::string(bytes.begin(), bytes.end()))));
    }
    std::optional<std::string> problem = run_disagreement(places);
    if (!problem) problem = shared_gpu_problem(places);
    verdict = {{"layout", layout_of(places, env_.node_count)}};
    if (problem) verdict["problem"] = *problem;
    store_->set(kVerdict, verdict.dump());
  } else {
    constexpr std::chrono::seconds kVerdictWait{60};  // every place is in: rank 0 needs milliseconds
    if (!wait_for_key(*store_, kVerdict, std::chrono::steady_clock::now() + kVerdictWait)) {
      throw InputError(
          fmt::format("rank {}: every rank joined, but rank 0 published no verdict on their places in "
                      "{} s (its log says why)",
                      env_.rank, kVerdictWait.count()));
    }
    verdict = nlohmann::json::parse(store_->get_to_str(kVerdict));
  }
  layout_ = verdict.at("layout");
  if (!verdict.contains("problem")) return;
  if (store_->add(kVerdictRead, 1) < env_.world_size && !env_.store_hosted && env_.rank == 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (store_->add(kVerdictRead, 0) < env_.world_size && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  throw InputError(fmt::format("rank {}: {}", env_.rank, verdict.at("problem").get<std::string>()));
}

}  // namespace tipbench::distributed
