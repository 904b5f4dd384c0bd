#include "distributed/session.h"

#include "distributed/groups.h"
#include "tipbench/device_init.h"
#include "tipbench/error_text.h"
#include "tipbench/exit_codes.h"
#include "tipbench/result.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <unistd.h>

namespace tipbench::distributed {

namespace {

// Never destroyed: process groups must not be torn down during static destruction (a peer may
// already be gone); the process ends with the run.
std::unique_ptr<Session>& the_session() {
  static auto* session = new std::unique_ptr<Session>();
  return *session;
}

std::mutex& start_mutex() {
  static std::mutex m;
  return m;
}

constexpr std::chrono::seconds kStoreTimeout{60};

// Who hosts the store, for messages about losing it.
std::string store_host(const RankEnv& env) {
  if (env.launcher == "tipbench") return "the tipbench launcher";
  if (env.store_hosted) return "the torchrun agent";
  return "rank 0";
}

// `timeout` bounds each of the store's later blocking calls; a client's connection attempt
// takes about twice it (c10d tries once more after a failed connect).
c10::intrusive_ptr<c10d::Store> connect_store(const RankEnv& env, bool host,
                                              std::chrono::milliseconds timeout = kStoreTimeout) {
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
  if (!env.store_prefix.empty()) store = c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, store);
  return store;
}

// c10d logs every failed connection attempt of the rendezvous (with a backtrace) before it
// throws; the wait below has its own one-line outcome. FATAL only while it lasts, unless the
// user set TORCH_CPP_LOG_LEVEL (NCCL's watchdog speaks at ERROR later, and should).
class QuietRendezvous {
 public:
  QuietRendezvous() : before_(FLAGS_caffe2_log_level) {
    constexpr int kFatal = 3;
    if (std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr)
      FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, kFatal);
  }
  ~QuietRendezvous() { FLAGS_caffe2_log_level = before_; }
  QuietRendezvous(const QuietRendezvous&) = delete;
  QuietRendezvous& operator=(const QuietRendezvous&) = delete;

 private:
  int before_;
};

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

}  // namespace

void quiet_c10d_warnings() {
  constexpr int kError = 2;  // c10's severities: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL
  if (std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr) FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, kError);
}

Session::Session(RankEnv env, c10::Device device) : env_(std::move(env)), device_(device) {}

Session::~Session() {
  stop_watchdog();
  // Outstanding commands must finish before their tensor goes away.
  if (last_command_) {
    try {
      last_command_->wait();
    } catch (const std::exception&) {
    }
  }
}

Session& Session::start(const RankEnv& env, const c10::Device& device, std::chrono::seconds rendezvous_timeout,
                        const nlohmann::json& run) {
  std::lock_guard<std::mutex> lock(start_mutex());
  auto& session = the_session();
  if (session) throw std::logic_error("the distributed session is started twice");
  c10::Device rank_device = c10::Device(c10::kCPU);
  if (device.is_cuda()) {
    const int gpus = static_cast<int>(c10::cuda::device_count());
    rank_device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(gpu_index_for(env, gpus)));
  }
  initialize_device(rank_device);  // a follower's first allocator call must find CUDA initialised
  quiet_c10d_warnings();
  session.reset(new Session(env, rank_device));
  session->connect(rendezvous_timeout, run);
  return *session;
}

Session* Session::current() { return the_session().get(); }

Session& Session::current_or_solo(const c10::Device& device) {
  if (auto* s = current()) return *s;
  std::lock_guard<std::mutex> lock(start_mutex());
  auto& session = the_session();
  RankEnv solo;
  solo.launcher = "none";
  // "cuda" without an index means the current device, as a tensor's device does.
  const c10::Device solo_device =
      device.is_cuda() && !device.has_index() ? c10::Device(c10::kCUDA, c10::cuda::current_device()) : device;
  initialize_device(solo_device);
  session.reset(new Session(solo, solo_device));
  auto store = c10::make_intrusive<c10d::HashStore>();
  session->store_ = store;
  const GlooEndpoint local = gloo_endpoint("127.0.0.1", 0);
  session->control_ = make_gloo_group(c10::make_intrusive<c10d::PrefixStore>("control", store), 0, 1, local);
  const auto grads = c10::make_intrusive<c10d::PrefixStore>("grads", store);
  session->gradients_ = solo_device.is_cuda() ? make_nccl_group(grads, 0, 1, solo_device.index(), kCollectiveTimeout)
                                              : make_gloo_group(grads, 0, 1, local);
  session->transport_ = solo_device.is_cuda() ? "nccl: " + nccl_transport_text() : "gloo: " + local.text;
  session->layout_ = layout_of({{.rank = 0, .node = 0, .host = host_name()}}, 1);
  session->make_gradient_group(grads);
  session->command_ = at::zeros({2}, at::kLong);
  return *session;
}

void Session::connect(std::chrono::seconds rendezvous_timeout, const nlohmann::json& run) {
  const RankPlace place{.rank = env_.rank,
                        .node = env_.node_rank,
                        .host = host_name(),
                        .gpu = device_.is_cuda() ? gpu_uuid(device_.index()) : std::string(),
                        .run = run};
  const bool host = !env_.store_hosted && env_.rank == 0;
  const auto deadline = std::chrono::steady_clock::now() + rendezvous_timeout;
  {
    QuietRendezvous quiet;
    if (host) {
      store_ = connect_store(env_, true);
    } else {
      reach_store(deadline, rendezvous_timeout);
    }
    // The watchdog's own connection: a heartbeat never queues behind a blocked `get`.
    watchdog_store_ = connect_store(env_, false);
    wait_for_every_rank(deadline, rendezvous_timeout, place);
  }
  const GlooEndpoint endpoint = gloo_endpoint(env_.master_addr, env_.master_port);
  control_ =
      make_gloo_group(c10::make_intrusive<c10d::PrefixStore>("control", store_), env_.rank, env_.world_size, endpoint);
  // Followers wait on commands while the leader runs other arms: no collective timeout there.
  control_->setTimeout(std::chrono::hours(24 * 7));
  const auto grads = c10::make_intrusive<c10d::PrefixStore>("grads", store_);
  gradients_ = device_.is_cuda()
                   ? make_nccl_group(grads, env_.rank, env_.world_size, device_.index(), kCollectiveTimeout)
                   : make_gloo_group(grads, env_.rank, env_.world_size, endpoint);
  transport_ = device_.is_cuda() ? "nccl: " + nccl_transport_text() : "gloo: " + endpoint.text;
  make_gradient_group(grads);
  command_ = at::zeros({2}, at::kLong);
  watchdog_store_->set(fmt::format("hb/{}", env_.rank), std::string("0 0"));
  control_->barrier()->wait();  // every rank is in and has a heartbeat key
  if (env_.world_size > 1) watchdog_ = std::thread([this] { watch(); });
}

// A client's connection attempts, each short, until the store answers or the deadline passes.
void Session::reach_store(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout) {
  constexpr std::chrono::milliseconds kAttempt{2000};
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      store_ = connect_store(env_, false, std::max(std::chrono::milliseconds(100), std::min(left, kAttempt)));
      return;
    } catch (const std::exception&) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw InputError(fmt::format(
            "rank {}: waited {} s (--rendezvous-timeout) for the rendezvous store at {}:{}, which {} hosts; it never "
            "came up (is it running, with this MASTER_ADDR and MASTER_PORT?)",
            env_.rank, timeout.count(), env_.master_addr, env_.master_port, store_host(env_)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

namespace {

constexpr const char* kArrived = "rdzv/arrived";         // a count: every rank adds 1
constexpr const char* kAllArrived = "rdzv/all_arrived";  // set by the rank whose add made it world size
constexpr const char* kVerdict = "rdzv/verdict";         // rank 0's: the layout, and a problem if any
constexpr const char* kVerdictRead = "rdzv/verdict_read";

std::string joined_key(int rank) { return fmt::format("rdzv/joined/{}", rank); }

// The store's blocking wait for one key, until `deadline`; false when it passed first. In
// slices, so that a key that never comes costs no more than the deadline.
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

}  // namespace

// Every rank says it is here; all wait (one deadline with the store's) until all are, so the
// process groups that follow find every peer at once, and a missing rank is named. As
// torch.distributed's _store_based_barrier (distributed_c10d.py) counts arrivals: one add per
// rank, and the rank that completes the count sets a key the others wait on, so the store sees
// O(1) calls per rank, not one poll of every key by every rank.
void Session::wait_for_every_rank(std::chrono::steady_clock::time_point deadline, std::chrono::seconds timeout,
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
void Session::agree_on_places() {
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

// What torch.distributed's _new_process_group_helper does with one backend: a ProcessGroup over
// the same store, the backend registered for the device type it serves and made the default.
void Session::make_gradient_group(const c10::intrusive_ptr<c10d::Store>& store) {
  using Type = c10d::ProcessGroup::BackendType;
  const Type type = device_.is_cuda() ? Type::NCCL : Type::GLOO;
  gradient_group_ = c10::make_intrusive<c10d::ProcessGroup>(store, env_.rank, env_.world_size);
  gradient_group_->setBackend(device_.type(), type, gradients_);
  gradient_group_->setDefaultBackend(type);
}

void Session::send(Op op, const std::string& payload) {
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
    peer_failed(error_summary(e));
  }
  note_progress();
}

std::pair<Op, std::string> Session::receive() {
  std::vector<at::Tensor> tensors{command_};
  try {
    control_->broadcast(tensors, c10d::BroadcastOptions{})->wait();
  } catch (const std::exception& e) {
    peer_failed(error_summary(e));
  }
  note_progress();
  const auto op = static_cast<Op>(command_[0].item<std::int64_t>());
  seq_ = command_[1].item<std::int64_t>();
  std::string payload;
  try {
    if (op == Op::prepare) payload = store_->get_to_str(fmt::format("cmd/{}", seq_));
  } catch (const std::exception& e) {
    lost_store(e);
  }
  return {op, payload};
}

void Session::publish_metrics(const std::map<std::string, double>& metrics) {
  store_->set(fmt::format("metrics/{}/{}", seq_, env_.rank), nlohmann::json(metrics).dump());
}

std::vector<std::map<std::string, double>> Session::collect_metrics() {
  std::vector<std::map<std::string, double>> all(env_.world_size);
  for (int r = 1; r < env_.world_size; ++r) {
    const std::string key = fmt::format("metrics/{}/{}", seq_, r);
    try {
      all[r] = nlohmann::json::parse(store_->get_to_str(key)).get<std::map<std::string, double>>();
      store_->deleteKey(key);
    } catch (const std::exception& e) {
      peer_failed(fmt::format("rank {} sent no measurements: {}", r, error_summary(e)));
    }
  }
  return all;
}

void Session::watch() {
  struct Seen {
    std::string beat;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Seen> seen(env_.world_size, {"", std::chrono::steady_clock::now()});
  std::int64_t beat = 0;
  while (!stop_.load()) {
    try {
      watchdog_store_->set(fmt::format("hb/{}", env_.rank), fmt::format("{} {}", ++beat, progress_.load()));
      const auto now = std::chrono::steady_clock::now();
      for (int r = 0; r < env_.world_size; ++r) {
        if (r == env_.rank) continue;
        std::string value = watchdog_store_->get_to_str(fmt::format("hb/{}", r));
        const std::string this_beat = value.substr(0, value.find(' '));
        if (this_beat != seen[r].beat) {
          seen[r] = {this_beat, now};
        } else if (now - seen[r].since > kStaleAfter && !stop_.load()) {
          fail(fmt::format("rank {} stopped responding (no heartbeat for {} s): it died or hangs", r,
                           std::chrono::duration_cast<std::chrono::seconds>(now - seen[r].since).count()));
        }
      }
    } catch (const std::exception& e) {
      if (stop_.load()) return;
      lost_store(e);
    }
    std::this_thread::sleep_for(kHeartbeatPeriod);
  }
}

void Session::peer_failed(const std::string& what) {
  if (env_.world_size > 1 && watchdog_.joinable()) {
    // The watchdog names a dead or stopped rank within kStaleAfter and exits the process.
    std::this_thread::sleep_for(kStaleAfter + 3 * kHeartbeatPeriod);
    // Everyone still beats: some rank hangs inside the run. The one with least progress is it.
    int slowest = -1;
    long long least = 0;
    try {
      for (int r = 0; r < env_.world_size; ++r) {
        const std::string value = watchdog_store_->get_to_str(fmt::format("hb/{}", r));
        const long long progress = std::atoll(value.substr(value.find(' ') + 1).c_str());
        if (slowest < 0 || progress < least) slowest = r, least = progress;
      }
    } catch (const std::exception&) {
    }
    if (slowest >= 0) fail(fmt::format("rank {} hangs (least progress) and a collective failed: {}", slowest, what));
  }
  fail(fmt::format("a collective failed: {}", what));
}

void Session::lost_store(const std::exception& e) {
  fail(fmt::format("lost the rendezvous store hosted by {} ({}:{}): {}", store_host(env_), env_.master_addr,
                   env_.master_port, error_summary(e)));
}

void Session::fail(const std::string& message) {
  fmt::print(stderr, "error: rank {}: {}; exiting without writing a result\n", env_.rank, message);
  std::fflush(stderr);
  // No destructors: a process group with a dead peer may block in its own teardown.
  std::_Exit(exit_code::failed);
}

void Session::stop_watchdog() {
  stop_.store(true);
  if (watchdog_.joinable()) {
    if (watchdog_.get_id() == std::this_thread::get_id()) {
      watchdog_.detach();
    } else {
      watchdog_.join();
    }
  }
}

}  // namespace tipbench::distributed
