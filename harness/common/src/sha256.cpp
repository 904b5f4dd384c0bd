#include "tipbench/common/sha256.h"

#include <openssl/evp.h>

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace tipbench {

namespace {

std::vector<unsigned char> digest_of(std::span<const std::uint8_t> bytes) {
  std::vector<unsigned char> digest(EVP_MAX_MD_SIZE);
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  }
  digest.resize(length);
  return digest;
}

}  // namespace

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  std::string hex;
  for (const unsigned char b : digest_of(bytes)) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string sha256_base64(std::span<const std::uint8_t> bytes) {
  const auto digest = digest_of(bytes);
  std::string out(4 * ((digest.size() + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), digest.data(), static_cast<int>(digest.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace tipbench
