#include "distributed/session.h"

#include "distributed/groups.h"
#include "tipbench/device/device_init.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <c10/cuda/CUDAFunctions.h>

#include <memory>
#include <mutex>
#include <stdexcept>

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

}  // namespace

Session::Session(RankEnv env, c10::Device device)
    : env_(std::move(env)), device_(device), rendezvous_(env_, device_), watchdog_(env_) {}

// The watchdog stops first; then the channel waits for its outstanding command.
Session::~Session() { watchdog_.stop(); }

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
  session->connect_alone();
  return *session;
}

// The groups are built in the same order on every rank (control, then gradients): each pairs its
// ranks up through the store.
void Session::connect(std::chrono::seconds rendezvous_timeout, const nlohmann::json& run) {
  rendezvous_.join(rendezvous_timeout, run);
  watchdog_.arm(rendezvous_.watchdog_store());
  channel_.emplace(env_, rendezvous_.store(), rendezvous_.endpoint(), watchdog_);
  make_gradient_group();
  channel_->barrier();  // every rank is in and has a heartbeat key
  watchdog_.start();
}

void Session::connect_alone() {
  rendezvous_.join_alone();
  channel_.emplace(env_, rendezvous_.store(), rendezvous_.endpoint(), watchdog_);
  make_gradient_group();
}

// What torch.distributed's _new_process_group_helper does with one backend: a ProcessGroup over
// the same store, the backend registered for the device type it serves and made the default.
void Session::make_gradient_group() {
  const auto grads = c10::make_intrusive<c10d::PrefixStore>("grads", rendezvous_.store());
  gradients_ = device_.is_cuda()
                   ? make_nccl_group(grads, env_.rank, env_.world_size, device_.index(), kCollectiveTimeout)
                   : make_gloo_group(grads, env_.rank, env_.world_size, rendezvous_.endpoint());
  using Type = c10d::ProcessGroup::BackendType;
  const Type type = device_.is_cuda() ? Type::NCCL : Type::GLOO;
  gradient_group_ = c10::make_intrusive<c10d::ProcessGroup>(grads, env_.rank, env_.world_size);
  gradient_group_->setBackend(device_.type(), type, gradients_);
  gradient_group_->setDefaultBackend(type);
}

}  // namespace tipbench::distributed
