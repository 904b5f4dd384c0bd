// Process-group factories, one per backend, each in its own file: ProcessGroupGloo needs the gloo
// headers (Debian's libgloo-dev; the wheel does not ship them) and ProcessGroupNCCL the NCCL
// header (the nvidia-nccl wheel). Example:
//   auto g = make_gloo_group(store, rank, world, "127.0.0.1");
//   std::vector<at::Tensor> t{x}; g->allreduce(t)->wait();
#pragma once

#include <c10/core/Device.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace tipbench::distributed {

// Where Gloo's TCP transport binds, and why, for the result: GLOO_SOCKET_IFNAME when set; loopback
// when the store is on this host (127.x or localhost); else the local address the kernel routes
// MASTER_ADDR from, so that a host name that does not resolve (or resolves to 127.0.1.1, as
// Debian's /etc/hosts has it) cannot leave a multi-node run on loopback, which Gloo's own
// default (createDefaultDevice: the host name's address, else loopback) would.
struct GlooEndpoint {
  std::string interface;  // bind to this interface, or
  std::string address;    // to this address
  std::string text;       // "interface eth0 (GLOO_SOCKET_IFNAME)", "10.0.0.2 (the route to MASTER_ADDR)"
};
GlooEndpoint gloo_endpoint(const std::string& master_addr, int master_port);

// Gloo over TCP, bound where gloo_endpoint says.
c10::intrusive_ptr<c10d::Backend> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, const GlooEndpoint& endpoint);

// NCCL's choice of transport for the result: NCCL_SOCKET_IFNAME / NCCL_IB_HCA when set.
std::string nccl_transport_text();

// NCCL on CUDA device `device_index` (made current first, as NCCL requires), each collective
// bounded by `timeout`. Throws std::runtime_error when this build has no NCCL support.
c10::intrusive_ptr<c10d::Backend> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, c10::DeviceIndex device_index,
                                                  std::chrono::milliseconds timeout);

}  // namespace tipbench::distributed
