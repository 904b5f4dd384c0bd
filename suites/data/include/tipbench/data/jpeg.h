// JPEG encoding and decoding with libjpeg-turbo (Debian's libjpeg62-turbo), the library
// Pillow-SIMD, torchvision.io and DALI's CPU path decode with. Corrupt data is an error, never
// an exception through C code and never a grey half-image: libjpeg's recoverable warnings
// ("Premature end of JPEG file") count as errors, as Pillow's "image file is truncated" does.
//   std::vector<std::uint8_t> bytes = tipbench::data::encode_jpeg(image, /*quality=*/90);
//   RgbImage out;  std::string error;
//   if (!tipbench::data::decode_jpeg(bytes, out, error)) { /* error says why */ }
#pragma once

#include "tipbench/data/image.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tipbench::data {

// Baseline JPEG, 4:2:0 chroma subsampling, standard Huffman tables (libjpeg's defaults, as
// Pillow's). Throws std::invalid_argument for an empty image or a quality outside 1..100.
std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality);

// Decodes into `out` (its buffer is reused across calls), converting grayscale to RGB. Returns
// false with `error` set for data that is not a complete, valid JPEG.
bool decode_jpeg(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& error);

struct JpegHeader {
  int width = 0, height = 0;
  int components = 0;  // 1 (grayscale) or 3
};

// What a loader that decodes elsewhere (nvJPEG, on the GPU) checks on the host first, cheaply:
// the header parses (no entropy-coded data is decoded), its colour space converts to RGB as
// decode_jpeg's does, and an end-of-image marker follows the start of the scan data (a truncated
// file has none: in entropy-coded data 0xFF is always followed by 0x00 or a restart marker).
// Damage inside the scan data passes: only a decoder finds it. false with `error` set.
bool inspect_jpeg(std::span<const std::uint8_t> bytes, JpegHeader& out, std::string& error);

}  // namespace tipbench::data
