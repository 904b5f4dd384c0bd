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

// Gloo over TCP. The transport binds to loopback when the store is on this host (127.x or
// localhost), to GLOO_SOCKET_IFNAME when set, else to the address this host's name resolves to.
c10::intrusive_ptr<c10d::Backend> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, const std::string& master_addr);

// NCCL on CUDA device `device_index` (made current first, as NCCL requires), each collective
// bounded by `timeout`. Throws std::runtime_error when this build has no NCCL support.
c10::intrusive_ptr<c10d::Backend> make_nccl_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                  int world_size, c10::DeviceIndex device_index,
                                                  std::chrono::milliseconds timeout);

}  // namespace tipbench::distributed
