// JPEG decoding on a CUDA device with nvJPEG's batched API: the GPU-decode rung of the
// dataloader suite's pipeline ladder (DALI's approach: the host only reads files). nvJPEG comes
// from the PyPI wheel that requirements.txt pins (cuda-toolkit[nvjpeg]); the CUDA toolkit here
// has none, and the device bundle ships it. The hardware decoder (NVJPG engines: A100, H100) is
// used where nvjpegCreateEx accepts it, else nvJPEG's CUDA backend. Chroma is upsampled with
// interpolation, as libjpeg-turbo's "fancy" upsampling does. Example:
//   if (auto why = nvjpeg_unavailable_reason(device)) { /* skip, saying *why */ }
//   NvjpegDecoder decoder(device);
//   auto decoded = decoder.decode(files);   // on the current stream: decoded[i].image is (3, H, W) uint8
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tipbench::data {

// Whether this build links nvJPEG (CMake found the wheel's nvjpeg.h and libnvjpeg.so.13).
bool built_with_nvjpeg();
// nullopt when nvJPEG can decode on `device`; else why not (this build has no nvJPEG, or the
// device is not a CUDA device).
std::optional<std::string> nvjpeg_unavailable_reason(const c10::Device& device);

class NvjpegDecoder {
 public:
  // Throws std::runtime_error with nvjpeg_unavailable_reason, or naming the nvJPEG call and its
  // status when nvJPEG cannot start on `device`.
  explicit NvjpegDecoder(c10::Device device);
  ~NvjpegDecoder();
  NvjpegDecoder(const NvjpegDecoder&) = delete;
  NvjpegDecoder& operator=(const NvjpegDecoder&) = delete;

  struct Decoded {
    torch::Tensor image;  // uint8 (3, H, W), planar RGB on the device; undefined when decoding failed
    std::string error;    // why it failed
  };
  // Decodes every file on the device's current CUDA stream: work queued after this call on that
  // stream sees the pixels. The files' bytes must stay alive and unchanged until that stream has
  // passed this point (record an event). A file nvJPEG refuses is reported in its Decoded; the
  // others still decode (a refused batched call is redone one image at a time).
  std::vector<Decoded> decode(const std::vector<std::span<const std::uint8_t>>& files);

  // The backend that decodes: "hardware (N engines)" or "CUDA", with the nvJPEG version.
  std::string backend() const;
  // Batched calls nvJPEG refused and that were redone one image at a time.
  std::int64_t fallback_batches() const;

 private:
  struct Codec;
  std::unique_ptr<Codec> codec_;
};

}  // namespace tipbench::data
