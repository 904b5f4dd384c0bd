// The fingerprint (tipbench/environment/fingerprint.h) read from this machine: LibTorch's and its
// libraries' versions, the CPU, the OS, the compiler and, for a CUDA run, the GPUs and the driver.
#pragma once

#include "tipbench/environment/fingerprint.h"

namespace tipbench {

// Gathers the fingerprint; include_gpus decides whether the machine's GPU fields are filled in
// (gpus, driver_version, cuda_driver_api_version): CPU runs leave them empty even on a GPU
// machine, so a CPU result is keyed by the CPU and a driver update does not set it apart. The
// versions of LibTorch's own libraries (CUDA runtime, cuDNN, NCCL) are always filled in when
// they can be read. Never throws for a missing GPU, driver or library: the field stays "".
Fingerprint collect_fingerprint(bool include_gpus);

}  // namespace tipbench
