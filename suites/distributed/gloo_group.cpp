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
#include "distributed/rank_env.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace tipbench::distributed {

namespace {

// The local IPv4 address the kernel would send from to reach host:port (a UDP connect sends
// nothing); "" when the host does not resolve or no route leads there.
std::string source_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) return "";
  std::string out;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t length = sizeof(local);
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr) {
      out = text;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return out;
}

}  // namespace

GlooEndpoint gloo_endpoint(const std::string& master_addr, int master_port) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
    return {.interface = ifname, .text = std::string("interface ") + ifname + " (GLOO_SOCKET_IFNAME)"};
  }
  if (is_loopback_address(master_addr, /*resolve=*/false)) {
    return {.address = "127.0.0.1", .text = "127.0.0.1 (loopback: the store is on this host)"};
  }
  const std::string source = source_address_towards(master_addr, master_port);
  if (source.empty()) return {.text = "the host name's address (Gloo's default: no route to MASTER_ADDR found)"};
  return {.address = source, .text = source + " (this host's route to MASTER_ADDR " + master_addr + ")"};
}

c10::intrusive_ptr<c10d::Backend> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, const GlooEndpoint& endpoint) {
  // The timeout bounds each collective of the gradient group (a hung peer); the control group
  // raises its own afterwards.
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
  if (!endpoint.interface.empty()) {
    // A comma-separated list is one device per interface, used round-robin, as torch.distributed
    // documents GLOO_SOCKET_IFNAME ("Common environment variables": eth0,eth1,eth2,eth3).
    std::size_t start = 0;
    while (start <= endpoint.interface.size()) {
      const std::size_t comma = std::min(endpoint.interface.find(',', start), endpoint.interface.size());
      options->devices.push_back(
          c10d::ProcessGroupGloo::createDeviceForInterface(endpoint.interface.substr(start, comma - start)));
      start = comma + 1;
    }
  } else if (!endpoint.address.empty()) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(endpoint.address));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

}  // namespace tipbench::distributed
