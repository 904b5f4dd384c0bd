// A small in-memory classification task that a CNN learns in a few epochs, for experiments that
// need real accuracy (time-to-accuracy) rather than throughput on random labels. Each class is a
// smooth random colour pattern (4x4 noise upsampled to the image size, zero mean, unit std); a
// sample is its class pattern plus Gaussian pixel noise, so accuracy climbs over epochs and
// saturates below 100% at high noise. Deterministic for a seed; made on the CPU, then moved.
//   LearnableData d = make_learnable_data({.train_samples = 1024, .image_size = 8, .noise = 4}, device);
//   d.train_images.sizes() == [1024, 3, 8, 8];  d.train_labels in [0, 10)
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>

namespace tipbench::suites {

struct LearnableDataOptions {
  std::int64_t train_samples = 1024;
  std::int64_t test_samples = 512;
  std::int64_t classes = 10;
  std::int64_t image_size = 8;
  double noise = 4.0;  // pixel noise std, relative to the class pattern's unit std
  std::uint64_t seed = 0;
};
void to_json(nlohmann::json& j, const LearnableDataOptions& o);

struct LearnableData {
  at::Tensor train_images, train_labels;  // [N, 3, S, S] float, [N] long
  at::Tensor test_images, test_labels;    // held out: the same class patterns, fresh noise
};

// Throws std::invalid_argument for non-positive sizes or a negative noise.
LearnableData make_learnable_data(const LearnableDataOptions& options, const c10::Device& device);

}  // namespace tipbench::suites
