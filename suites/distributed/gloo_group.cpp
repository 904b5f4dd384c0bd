// The only file that includes ProcessGroupGloo.hpp (it needs USE_C10D_GLOO, which the Torch
// target defines, and the gloo headers). Those come from Debian's libgloo-dev, not from the gloo
// that libtorch_cpu was built with; that is safe because ProcessGroupGloo holds every gloo object
// behind a shared_ptr (its layout does not depend on gloo's) and this file runs no inline gloo
// code: the constructor, destructor, Options and device factories are all out of line in
// libtorch_cpu. Debian's libgloo.so is never linked.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include "distributed/groups.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <chrono>
#include <cstdlib>

namespace tipbench::distributed {

namespace {

bool is_loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

}  // namespace

c10::intrusive_ptr<c10d::Backend> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, const std::string& master_addr) {
  // The timeout bounds each collective of the gradient group (a hung peer); the control group
  // raises its own afterwards.
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (is_loopback(master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

}  // namespace tipbench::distributed
