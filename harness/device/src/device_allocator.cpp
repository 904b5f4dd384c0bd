#include "tipbench/device/device_allocator.h"

#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <array>
#include <memory>
#include <mutex>

namespace tipbench {

namespace {

// PyTorch's own: c10::cuda::CUDACachingAllocator, as torch/cuda/memory.py calls it.
class CudaCachingAllocator final : public DeviceAllocator {
 public:
  explicit CudaCachingAllocator(c10::DeviceIndex index) : index_(index) {}
  AllocatorReading read() const override {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_);
    constexpr std::size_t kAggregate = 0;  // StatType::AGGREGATE (c10/core/Allocator.h)
    return {stats.allocated_bytes[kAggregate].current, stats.allocated_bytes[kAggregate].peak,
            stats.reserved_bytes[kAggregate].current, stats.reserved_bytes[kAggregate].peak};
  }
  void empty_cache() override { c10::cuda::CUDACachingAllocator::emptyCache(); }
  void reset_peaks() override { c10::cuda::CUDACachingAllocator::resetPeakStats(index_); }
  void make_process_wide_state() override {
    // A tiny linear layer's forward and backward in fp32 and bf16: mm and addmm (cuBLAS; addmm
    // with a 1-D bias goes to cuBLASLt) on this thread's handle, and their gradients on the
    // autograd engine's device thread, whose handle is its own. Each (handle, stream) gets its
    // workspace at first use (CublasHandlePool.cpp: getCurrentCUDABlasHandle ->
    // setWorkspaceForHandle; getCUDABlasLtWorkspace), kept until clearCublasWorkspaces, which
    // tipbench never calls: a kept CUDA graph replays with its workspace's address baked in.
    // torch.testing's CudaMemoryLeakCheck ("avoid counting cublasWorkspace allocations") and
    // inductor's cudagraph trees (clear_cublass_cache) name the same state.
    for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      const auto options = torch::TensorOptions().device(torch::Device(torch::kCUDA, index_)).dtype(dtype);
      const auto weight = torch::randn({64, 64}, options).requires_grad_(true);
      const auto bias = torch::zeros({64}, options).requires_grad_(true);
      const auto x = torch::randn({16, 64}, options);
      torch::addmm(bias, x, weight.t()).matmul(weight).sum().backward();
    }
    c10::cuda::device_synchronize();
  }

 private:
  c10::DeviceIndex index_;
};

DeviceAllocator* test_allocator = nullptr;

}  // namespace

DeviceAllocator* device_allocator(const c10::Device& device) {
  if (test_allocator) return test_allocator;
  if (!device.is_cuda()) return nullptr;
  static std::mutex mutex;
  static std::array<std::unique_ptr<CudaCachingAllocator>, 64> by_index;
  const auto index = static_cast<std::size_t>(device.has_index() ? device.index() : 0);
  const std::lock_guard lock(mutex);
  auto& slot = by_index.at(index);
  if (!slot) slot = std::make_unique<CudaCachingAllocator>(static_cast<c10::DeviceIndex>(index));
  return slot.get();
}

void use_device_allocator_for_tests(DeviceAllocator* allocator) { test_allocator = allocator; }

}  // namespace tipbench
