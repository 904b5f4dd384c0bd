// *_CUDA tests call TIPBENCH_REQUIRE_CUDA() first: without a CUDA device they are reported as
// skipped (with the reason), never as passed.
#pragma once

#include <gtest/gtest.h>
#include <torch/cuda.h>

#define TIPBENCH_REQUIRE_CUDA()                                              \
  do {                                                                       \
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device here"; \
  } while (0)
