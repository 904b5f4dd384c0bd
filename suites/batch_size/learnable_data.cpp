#include "learnable_data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <stdexcept>

namespace tipbench::suites {

void to_json(nlohmann::json& j, const LearnableDataOptions& o) {
  j = {{"train_samples", o.train_samples},
       {"test_samples", o.test_samples},
       {"classes", o.classes},
       {"image_size", o.image_size},
       {"noise", o.noise},
       {"seed", o.seed}};
}

LearnableData make_learnable_data(const LearnableDataOptions& o, const c10::Device& device) {
  if (o.train_samples < 1 || o.test_samples < 1 || o.classes < 2 || o.image_size < 1 || !(o.noise >= 0)) {
    throw std::invalid_argument(
        "learnable data needs positive sample counts, >= 2 classes, a positive "
        "image size and a non-negative noise");
  }
  // A private generator: making the data never moves the global torch seed.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto patterns = torch::nn::functional::interpolate(at::randn({o.classes, 3, 4, 4}, gen, f32),
                                                     torch::nn::functional::InterpolateFuncOptions()
                                                         .size(std::vector<int64_t>{o.image_size, o.image_size})
                                                         .mode(torch::kBilinear)
                                                         .align_corners(false));
  const auto dims = std::vector<int64_t>{1, 2, 3};
  patterns =
      (patterns - patterns.mean(dims, /*keepdim=*/true)) / patterns.std(dims, /*unbiased=*/true, /*keepdim=*/true);
  auto draw = [&](std::int64_t n, at::Tensor& images, at::Tensor& labels) {
    labels = at::randint(o.classes, {n}, gen, torch::TensorOptions().dtype(torch::kLong));
    images = patterns.index_select(0, labels) + o.noise * at::randn({n, 3, o.image_size, o.image_size}, gen, f32);
    images = images.to(device);
    labels = labels.to(device);
  };
  LearnableData d;
  draw(o.train_samples, d.train_images, d.train_labels);
  draw(o.test_samples, d.test_images, d.test_labels);
  return d;
}

}  // namespace tipbench::suites
