#include "tipbench/data/nvjpeg_decoder.h"

#include <ATen/core/CachingHostAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <nvjpeg.h>

#include <fmt/format.h>

#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace tipbench::data {

namespace {

const char* status_name(nvjpegStatus_t status) {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "an unknown nvJPEG status";
}

std::string failure(const char* call, nvjpegStatus_t status) {
  return fmt::format("{} returned {} ({})", call, status_name(status), static_cast<int>(status));
}

void check(nvjpegStatus_t status, const char* call) {
  if (status != NVJPEG_STATUS_SUCCESS) throw std::runtime_error("nvJPEG: " + failure(call, status));
}

// Chroma upsampled with interpolation, as libjpeg-turbo's default ("fancy") upsampling does:
// without it nvJPEG replicates chroma samples, and edges in colour differ from the CPU decode.
constexpr unsigned kFlags = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION;

// nvJPEG's own buffers come from PyTorch's caching allocators, as nvImageCodec's nvJPEG decoder
// plugins take a framework's stream-ordered allocators (nvjpegCreateExV2): left to itself nvJPEG
// calls cudaMalloc/cudaFree (cudaFree synchronizes the device) whenever its buffers grow, which
// could happen inside a timed step, and its memory would be missing from the arm's peak. Device
// blocks: CUDACachingAllocator::raw_alloc_with_stream on the stream nvJPEG names, and raw_delete,
// which leaves the block to later work on that stream (stream order). Pinned blocks: the CUDA
// host allocator; a freed block first records an event on nvJPEG's stream, so the block is not
// handed out again before the copies nvJPEG enqueued there have read it
// (ATen/core/CachingHostAllocator.h, record_event).
int device_malloc(void*, void** ptr, std::size_t size, cudaStream_t stream) {
  try {
    *ptr = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(size, stream);
    return 0;
  } catch (const std::exception&) {
    return 1;  // nvJPEG reports NVJPEG_STATUS_ALLOCATOR_FAILURE
  }
}

int device_free(void*, void* ptr, std::size_t, cudaStream_t) {
  try {
    c10::cuda::CUDACachingAllocator::raw_delete(ptr);
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

// The pinned blocks nvJPEG holds, by address: their DataPtrs (which free them) and contexts.
struct PinnedBlocks {
  c10::DeviceIndex device = 0;
  std::mutex mutex;
  std::unordered_map<void*, at::DataPtr> live;
};

int pinned_malloc(void* context, void** ptr, std::size_t size, cudaStream_t) {
  auto& blocks = *static_cast<PinnedBlocks*>(context);
  try {
    at::DataPtr block = at::getHostAllocator(at::kCUDA)->allocate(size);
    *ptr = block.get();
    std::lock_guard<std::mutex> lock(blocks.mutex);
    blocks.live.emplace(*ptr, std::move(block));
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

int pinned_free(void* context, void* ptr, std::size_t, cudaStream_t stream) {
  auto& blocks = *static_cast<PinnedBlocks*>(context);
  try {
    std::lock_guard<std::mutex> lock(blocks.mutex);
    auto it = blocks.live.find(ptr);
    if (it == blocks.live.end()) return 1;
    const auto on = c10::cuda::getStreamFromExternal(stream, blocks.device);
    at::getHostAllocator(at::kCUDA)->record_event(ptr, it->second.get_context(), on.unwrap());
    blocks.live.erase(it);  // back to the host allocator's cache, reused after the event
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

// nvJPEG writes planar RGB: the three planes of a contiguous (3, H, W) tensor, pitch = width.
nvjpegImage_t planes_of(const torch::Tensor& chw) {
  nvjpegImage_t image{};
  const auto plane = static_cast<std::size_t>(chw.size(1) * chw.size(2));
  for (int c = 0; c < 3; ++c) {
    image.channel[c] = chw.data_ptr<std::uint8_t>() + c * plane;
    image.pitch[c] = static_cast<std::size_t>(chw.size(2));
  }
  return image;
}

}  // namespace

struct NvjpegDecoder::Codec {
  c10::Device device;
  // Outlive the handles (destroyed in ~Codec's body, before the members).
  PinnedBlocks pinned;
  nvjpegDevAllocatorV2_t device_allocator{&device_malloc, &device_free, nullptr};
  nvjpegPinnedAllocatorV2_t pinned_allocator{&pinned_malloc, &pinned_free, &pinned};
  nvjpegHandle_t handle = nullptr;  // the batched decoder: hardware or CUDA backend
  nvjpegJpegState_t state = nullptr;
  bool hardware = false;
  unsigned engines = 0;
  int initialized_batch = 0;  // the batch size nvjpegDecodeBatchedInitialize last set; 0: none
  // One image at a time (nvjpegDecode, which the hardware backend lacks): a CUDA-backend handle
  // made when a batched call is first refused.
  nvjpegHandle_t single_handle = nullptr;
  nvjpegJpegState_t single_state = nullptr;
  std::int64_t fallbacks = 0;

  explicit Codec(c10::Device d) : device(d) { pinned.device = d.index(); }

  nvjpegStatus_t create(nvjpegBackend_t backend, nvjpegHandle_t* out) {
    return nvjpegCreateExV2(backend, &device_allocator, &pinned_allocator, kFlags, out);
  }
  ~Codec() {
    if (single_state != nullptr) nvjpegJpegStateDestroy(single_state);
    if (single_handle != nullptr) nvjpegDestroy(single_handle);
    if (state != nullptr) nvjpegJpegStateDestroy(state);
    if (handle != nullptr) nvjpegDestroy(handle);
  }

  void make_single() {
    if (single_handle != nullptr) return;
    check(create(NVJPEG_BACKEND_DEFAULT, &single_handle), "nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT)");
    check(nvjpegJpegStateCreate(single_handle, &single_state), "nvjpegJpegStateCreate");
  }
};

bool built_with_nvjpeg() { return true; }

std::optional<std::string> nvjpeg_unavailable_reason(const c10::Device& device) {
  if (!device.is_cuda()) return "nvJPEG decodes on a CUDA device; this run is on " + device.str();
  return std::nullopt;
}

NvjpegDecoder::NvjpegDecoder(c10::Device device) {
  if (auto why = nvjpeg_unavailable_reason(device)) throw std::runtime_error(*why);
  if (!device.has_index()) device = c10::Device(c10::kCUDA, c10::cuda::current_device());
  codec_ = std::make_unique<Codec>(device);
  Codec& c = *codec_;
  c10::cuda::CUDAGuard guard(device);
  // The hardware decoder first: nvjpegCreateExV2 refuses it on a GPU without NVJPG engines.
  if (c.create(NVJPEG_BACKEND_HARDWARE, &c.handle) == NVJPEG_STATUS_SUCCESS) {
    unsigned cores = 0;
    c.hardware = nvjpegGetHardwareDecoderInfo(c.handle, &c.engines, &cores) == NVJPEG_STATUS_SUCCESS && c.engines > 0;
    if (!c.hardware) {
      nvjpegDestroy(c.handle);
      c.handle = nullptr;
    }
  } else {
    c.handle = nullptr;
  }
  if (c.handle == nullptr) {
    check(c.create(NVJPEG_BACKEND_DEFAULT, &c.handle), "nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT)");
  }
  check(nvjpegJpegStateCreate(c.handle, &c.state), "nvjpegJpegStateCreate");
}

NvjpegDecoder::~NvjpegDecoder() = default;

std::vector<NvjpegDecoder::Decoded> NvjpegDecoder::decode(const std::vector<std::span<const std::uint8_t>>& files) {
  Codec& c = *codec_;
  c10::cuda::CUDAGuard guard(c.device);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(c.device.index()).stream();
  std::vector<Decoded> out(files.size());
  // Sizes from the headers (host-side parsing), then one output tensor per image.
  std::vector<std::size_t> positions;
  std::vector<const unsigned char*> data;
  std::vector<std::size_t> lengths;
  std::vector<nvjpegImage_t> images;
  for (std::size_t i = 0; i < files.size(); ++i) {
    int components = 0;
    nvjpegChromaSubsampling_t subsampling{};
    int widths[NVJPEG_MAX_COMPONENT] = {};
    int heights[NVJPEG_MAX_COMPONENT] = {};
    const auto status =
        nvjpegGetImageInfo(c.handle, files[i].data(), files[i].size(), &components, &subsampling, widths, heights);
    if (status != NVJPEG_STATUS_SUCCESS || widths[0] <= 0 || heights[0] <= 0) {
      out[i].error =
          status != NVJPEG_STATUS_SUCCESS ? failure("nvjpegGetImageInfo", status) : "no image size in the header";
      continue;
    }
    out[i].image =
        torch::empty({3, heights[0], widths[0]}, torch::TensorOptions().dtype(torch::kByte).device(c.device));
    positions.push_back(i);
    data.push_back(files[i].data());
    lengths.push_back(files[i].size());
    images.push_back(planes_of(out[i].image));
  }
  if (positions.empty()) return out;

  const int n = static_cast<int>(positions.size());
  nvjpegStatus_t status = NVJPEG_STATUS_SUCCESS;
  if (c.initialized_batch != n) {  // needed whenever the batch size changes (a batch with skipped files)
    status = nvjpegDecodeBatchedInitialize(c.handle, c.state, n, /*max_cpu_threads=*/1, NVJPEG_OUTPUT_RGB);
    c.initialized_batch = status == NVJPEG_STATUS_SUCCESS ? n : 0;
  }
  if (status == NVJPEG_STATUS_SUCCESS) {
    status = nvjpegDecodeBatched(c.handle, c.state, data.data(), lengths.data(), images.data(), stream);
  }
  if (status == NVJPEG_STATUS_SUCCESS) return out;

  // One file nvJPEG refuses (or one the hardware engine does not support) fails the whole call:
  // decode one image at a time to keep the others and name the culprit.
  ++c.fallbacks;
  c.initialized_batch = 0;  // a refused batch is reset by initialising again
  c.make_single();
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const auto single =
        nvjpegDecode(c.single_handle, c.single_state, data[k], lengths[k], NVJPEG_OUTPUT_RGB, &images[k], stream);
    if (single != NVJPEG_STATUS_SUCCESS) {
      Decoded& d = out[positions[k]];
      d.image = torch::Tensor();
      d.error = failure("nvjpegDecode", single);
    }
  }
  return out;
}

std::string NvjpegDecoder::backend() const {
  int major = 0, minor = 0, patch = 0;
  nvjpegGetProperty(MAJOR_VERSION, &major);
  nvjpegGetProperty(MINOR_VERSION, &minor);
  nvjpegGetProperty(PATCH_LEVEL, &patch);
  const std::string kind =
      codec_->hardware ? fmt::format("hardware decoder, {} engines", codec_->engines) : std::string("CUDA backend");
  return fmt::format("{} (nvJPEG {}.{}.{})", kind, major, minor, patch);
}

std::int64_t NvjpegDecoder::fallback_batches() const { return codec_->fallbacks; }

}  // namespace tipbench::data
