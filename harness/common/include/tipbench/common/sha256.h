// SHA-256 of bytes as 64 lowercase hex digits (OpenSSL's EVP digest), for content identity: the
// dataset manifest's files, a model file's fingerprint. Example:
//   sha256_hex({})   // "e3b0c442...b855"
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tipbench {

// Throws std::runtime_error when OpenSSL fails (never seen: a broken libcrypto).
std::string sha256_hex(std::span<const std::uint8_t> bytes);

// The same digest in base64, as a Content-Security-Policy names an inline script ('sha256-...').
std::string sha256_base64(std::span<const std::uint8_t> bytes);

}  // namespace tipbench
