// Tip: sizes in multiples of 8. Tensor Cores (and SIMD units) work on tiles of 8 or 16 elements;
// a dimension one off the multiple leaves a partial tile in every matmul, or drops the kernel to
// a slower path. Two experiments:
//   widths (ViTs)   the reference widths (head dim 64: hidden = heads x 64, MLP = 4 x hidden) vs
//                   head dim 63 and an MLP one narrower than 4 x hidden: every width odd or 4 mod 8.
//                   The unaligned model is ~3% smaller, so the note compares throughput x
//                   parameters (parameter-samples/s), which is fair to the smaller model.
//   batch (CNNs)    the default batch (a power of two) vs one sample fewer; samples/s is per sample.
// Baseline: aligned sizes (what the reference models use).
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/models/vit.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>

namespace tipbench::suites {

namespace {

// The ViT's image size and depth: the reference on CUDA; smaller on a CPU to stay cheap (the
// widths are under test, not the sequence or the depth): 64 px (17 tokens), 12 layers; --quick
// 32 px (5 tokens), 2 layers.
std::int64_t vit_image_size(const SuiteContext& context, const std::string& model) {
  if (context.device.is_cuda()) return models::resolved_image_size(model, {});
  return context.quick ? 32 : 64;
}
std::int64_t vit_layers(const SuiteContext& context, const std::string& model) {
  const std::int64_t reference = models::ViTOptions::of(model).num_layers;
  return !context.device.is_cuda() && context.quick ? 2 : reference;
}

// The model's ViT layout with every width a multiple of 8 (the reference) or not.
models::ViTOptions vit_widths(const std::string& model, std::int64_t image_size, std::int64_t layers, bool aligned) {
  models::ViTOptions o = models::ViTOptions::of(model);
  o.image_size = image_size;
  o.num_layers = layers;
  if (!aligned) {
    const std::int64_t head_dim = o.hidden_dim / o.num_heads - 1;  // 63
    o.hidden_dim = o.num_heads * head_dim;
    o.mlp_dim = 4 * o.hidden_dim - 1;
  }
  return o;
}

}  // namespace

class Alignment final : public Suite {
 public:
  std::string name() const override { return "alignment"; }
  std::string description() const override {
    return "sizes in multiples of 8 (default) vs one off: ViT widths (head dim 64 vs 63) and CNN batch (b vs b-1)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"001-003", "sizes in multiples of 8 for Tensor Cores (pad channels, hidden sizes, batch)"};
  }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    // A CNN (its batch is aligned) and a ViT (its widths are), on a CPU too.
    for (const auto& model : models_to_run(context, {.vit = true, .vit_on_cpu = true})) {
      if (model_family(model) == "vit") {
        Levels params = training_params(context, model);
        params.emplace_back("image", std::to_string(vit_image_size(context, model)));
        params.emplace_back("layers", std::to_string(vit_layers(context, model)));
        params.emplace_back("size", "widths");
        out.push_back({params, {{"aligned", {{"widths", "aligned"}}}, {"unaligned", {{"widths", "unaligned"}}}}});
      } else {
        const std::int64_t b = batch_size_for(context, model);
        out.push_back(
            {{{"model", model}, {"size", "batch"}},
             {{"aligned", {{"batch", std::to_string(b)}}}, {"unaligned", {{"batch", std::to_string(b - 1)}}}}});
      }
    }
    return out;
  }

  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec& arm) const override {
    if (level(c.params, "size") != "batch") {
      if (auto why = model_code_fixed(level(c.params, "model"), "builds the model at other image sizes and widths")) {
        return why;
      }
    }
    if (level(c.params, "size") == "batch" && level_int(arm.levels, "batch") < 1) {
      return "batch 1 has no smaller batch to compare with; pass --batch 2 or more";
    }
    return std::nullopt;
  }

  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const auto& model = level(c.params, "model");
    if (level(c.params, "size") == "batch") {
      return make_training_workload(context, {.model = model, .batch_size = level_int(arm.levels, "batch")});
    }
    TrainingSpec spec = training_spec(c);
    spec.model_options.image_size = level_int(c.params, "image");
    const auto options = vit_widths(model, spec.model_options.image_size, level_int(c.params, "layers"),
                                    level(arm.levels, "widths") == "aligned");
    spec.build_model = [options] { return torch::nn::AnyModule(models::VisionTransformer(options)); };
    return with_info(make_training_workload(context, spec), {{"hidden_dim", options.hidden_dim},
                                                             {"mlp_dim", options.mlp_dim},
                                                             {"num_heads", options.num_heads},
                                                             {"head_dim", options.hidden_dim / options.num_heads},
                                                             {"num_layers", options.num_layers}});
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      if (c.arms.size() != 2 || level(c.params, "size") != "widths") continue;
      const ArmResult& aligned = c.arms[0];
      const ArmResult& unaligned = c.arms[1];
      if (aligned.status != ArmStatus::ok || unaligned.status != ArmStatus::ok) continue;
      auto work_rate = [](const ArmResult& a) {
        return a.throughput_samples_per_s.median * a.info.value("parameters", 0.0);
      };
      if (work_rate(aligned) <= 0) continue;
      out.push_back(fmt::format(
          "{}: per parameter of model size (throughput x parameters), unaligned vs aligned x{:.2f} "
          "({} vs {} parameters; hidden/MLP {}/{} vs {}/{})",
          c.name, work_rate(unaligned) / work_rate(aligned), unaligned.info.value("parameters", 0),
          aligned.info.value("parameters", 0), unaligned.info.value("hidden_dim", 0),
          unaligned.info.value("mlp_dim", 0), aligned.info.value("hidden_dim", 0), aligned.info.value("mlp_dim", 0)));
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(Alignment);

}  // namespace tipbench::suites
