#include "tipbench/data/jpeg.h"

// jpeglib.h needs FILE and size_t declared first.
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <stdexcept>

namespace tipbench::data {

namespace {

// libjpeg reports a fatal error through error_exit, which must not return: we longjmp back to
// the caller's setjmp (an exception must not unwind through C frames). Warnings go through
// output_message, which by default prints to stderr: we keep the first one instead.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char first_warning[JMSG_LENGTH_MAX] = {};
  bool warned = false;
};

[[noreturn]] void on_error(j_common_ptr cinfo) { std::longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1); }

void on_output(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (!e->warned) (*cinfo->err->format_message)(cinfo, e->first_warning);
  e->warned = true;
}

jpeg_error_mgr* install(ErrorManager& e) {
  jpeg_std_error(&e.pub);
  e.pub.error_exit = on_error;
  e.pub.output_message = on_output;
  return &e.pub;
}

std::string message_of(j_common_ptr cinfo) {
  char text[JMSG_LENGTH_MAX] = {};
  (*cinfo->err->format_message)(cinfo, text);
  return text;
}

// Declared before setjmp, so a longjmp back into the frame skips no destructor; releases the
// codec (and the encoder's output buffer) on every path. jpeg_destroy_* is a no-op on a
// zero-initialised struct that jpeg_create_* never reached.
struct DecompressGuard {
  jpeg_decompress_struct* cinfo;
  ~DecompressGuard() { jpeg_destroy_decompress(cinfo); }
};

struct CompressGuard {
  jpeg_compress_struct* cinfo;
  unsigned char** buffer;
  ~CompressGuard() {
    jpeg_destroy_compress(cinfo);
    std::free(*buffer);
  }
};

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality) {
  if (image.width <= 0 || image.height <= 0 || image.pixels.size() != std::size_t(image.width) * image.height * 3) {
    throw std::invalid_argument("encode_jpeg: empty or inconsistent image");
  }
  if (quality < 1 || quality > 100) throw std::invalid_argument("encode_jpeg: quality must be in 1..100");
  jpeg_compress_struct cinfo{};
  ErrorManager errors;
  cinfo.err = install(errors);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  CompressGuard guard{&cinfo, &buffer};
  if (setjmp(errors.jump))
    throw std::runtime_error("JPEG encoding failed: " + message_of(reinterpret_cast<j_common_ptr>(&cinfo)));
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, /*force_baseline=*/TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<std::uint8_t*>(image.at(0, static_cast<int>(cinfo.next_scanline)));
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  return std::vector<std::uint8_t>(buffer, buffer + size);
}

namespace {

// Opens a decompressor on `bytes`, reads the header and runs `body(cinfo, errors)`, which returns
// false with `error` set or true. libjpeg's fatal errors longjmp back here, out of `body` too:
// `body` must hold no object with a destructor (a longjmp skips them).
template <typename Body>
bool with_header(std::span<const std::uint8_t> bytes, std::string& error, Body body) {
  if (bytes.empty()) {
    error = "empty file";
    return false;
  }
  jpeg_decompress_struct cinfo{};
  ErrorManager errors;
  cinfo.err = install(errors);
  DecompressGuard guard{&cinfo};
  if (setjmp(errors.jump)) {
    error = message_of(reinterpret_cast<j_common_ptr>(&cinfo));
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, /*require_image=*/TRUE);
  return body(cinfo, errors);
}

// libjpeg substitutes grey for missing data and only warns: for a benchmark that must notice a
// truncated file, a warning is an error.
bool no_warnings(const ErrorManager& errors, std::string& error) {
  if (errors.pub.num_warnings == 0) return true;
  error = std::string("corrupt JPEG data: ") + errors.first_warning;
  return false;
}

}  // namespace

bool decode_jpeg(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& error) {
  return with_header(bytes, error, [&](jpeg_decompress_struct& cinfo, const ErrorManager& errors) {
    cinfo.out_color_space = JCS_RGB;  // grayscale is expanded; CMYK is an error ("Unsupported color conversion")
    jpeg_start_decompress(&cinfo);
    out.resize(static_cast<int>(cinfo.output_width), static_cast<int>(cinfo.output_height));
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW rows[4];
      const int n = std::min<int>(4, static_cast<int>(cinfo.output_height - cinfo.output_scanline));
      for (int i = 0; i < n; ++i) rows[i] = out.at(0, static_cast<int>(cinfo.output_scanline) + i);
      jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(n));
    }
    jpeg_finish_decompress(&cinfo);
    return no_warnings(errors, error);
  });
}

bool inspect_jpeg(std::span<const std::uint8_t> bytes, JpegHeader& out, std::string& error) {
  return with_header(bytes, error, [&](jpeg_decompress_struct& cinfo, const ErrorManager& errors) {
    if (!no_warnings(errors, error)) return false;
    const J_COLOR_SPACE space = cinfo.jpeg_color_space;
    if (space != JCS_GRAYSCALE && space != JCS_YCbCr && space != JCS_RGB) {
      error = "Unsupported color conversion request";  // decode_jpeg's (libjpeg's) words for CMYK/YCCK
      return false;
    }
    // The header ends where the first scan's data starts: jpeg_mem_src's cursor is there now.
    const std::size_t scan_start = bytes.size() - cinfo.src->bytes_in_buffer;
    bool ended = false;
    for (std::size_t i = bytes.size() - 1; i > scan_start && !ended; --i) {
      ended = bytes[i - 1] == 0xFF && bytes[i] == 0xD9;
    }
    if (!ended) {
      error = "corrupt JPEG data: no end-of-image marker after the scan data (truncated file)";
      return false;
    }
    out = {static_cast<int>(cinfo.image_width), static_cast<int>(cinfo.image_height), cinfo.num_components};
    return true;
  });
}

}  // namespace tipbench::data
