// Internal to the CLI: the device a command's --device names, as `run`, `gate` and `advise` read it.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

namespace tipbench::cli {

// "auto" is cuda:0 when a CUDA device exists, else cpu. An explicit cuda without a device is an
// error, not a silent fallback: a CPU number must never pass for a GPU one.
std::optional<c10::Device> resolve_device(const std::string& name, std::string& error);

}  // namespace tipbench::cli
