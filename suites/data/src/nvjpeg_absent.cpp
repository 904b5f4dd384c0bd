// The build without nvJPEG (CMake did not find the wheel's nvjpeg.h and libnvjpeg.so.13): the
// GPU-decode rung says skipped with this reason; nothing else changes.
#include "tipbench/data/nvjpeg_decoder.h"

#include <stdexcept>

namespace tipbench::data {

namespace {
constexpr const char* kAbsent =
    "this build has no nvJPEG: CMake found no nvjpeg.h and libnvjpeg.so.13 (the nvidia-nvjpeg wheel that "
    "requirements.txt pins as cuda-toolkit[nvjpeg]; scripts/bootstrap.sh installs it)";
}  // namespace

struct NvjpegDecoder::Codec {};

bool built_with_nvjpeg() { return false; }

std::optional<std::string> nvjpeg_unavailable_reason(const c10::Device&) { return std::string(kAbsent); }

NvjpegDecoder::NvjpegDecoder(c10::Device) { throw std::runtime_error(kAbsent); }
NvjpegDecoder::~NvjpegDecoder() = default;

std::vector<NvjpegDecoder::Decoded> NvjpegDecoder::decode(const std::vector<std::span<const std::uint8_t>>&) {
  throw std::logic_error(kAbsent);
}
std::string NvjpegDecoder::backend() const { return "none"; }
std::int64_t NvjpegDecoder::fallback_batches() const { return 0; }

}  // namespace tipbench::data
