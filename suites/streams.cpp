// Tip: run independent parts of a model on separate CUDA streams. Kernels on one stream run one
// after another; kernels on two streams may run at the same time, so two branches that do not
// fill the GPU alone (a small batch, narrow layers) can share it. The model is a ViT of "parallel
// layers" (PaLM, ViT-22B): y = x + attn(ln(x)) + mlp(ln(x)), whose attention and MLP are
// independent (streams/parallel_vit.h). Baseline: every op on the current stream (PyTorch's
// default). Treatment: in every block the attention and the MLP each on a side stream, forked
// from the current stream and joined back into it by events; backward runs each op on its forward
// op's stream, so the branches' backward is concurrent too. The same weights, ops and kernels:
// both arms compute the same loss and gradients, bit for bit (a _CUDA test). Measured at the
// default batch and at batch 8 (short kernels, where a second stream has room), in fp32 and
// under bf16 autocast. CUDA only.
#include "common/autocast.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "streams/parallel_vit.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

// A ViT on CUDA (the reference ViT-B/16's widths; --quick ViT-Ti/16); on a CPU, where every arm
// is skipped, the cheapest, so listing the plan builds nothing large.
std::vector<std::string> streams_models(const SuiteContext& context) {
  if (!context.models.empty()) return context.models;
  if (!context.device.is_cuda() || context.quick) return {"vit_ti_16"};
  return {"vit_b_16"};
}

}  // namespace

class Streams final : public Suite {
 public:
  std::string name() const override { return "streams"; }
  std::string description() const override {
    return "a ViT of parallel blocks (attention and MLP side by side): both branches on the current stream "
           "(default) vs each on its own CUDA side stream, forked and joined by events (CUDA)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"001", "CUDA streams for independent branches: concurrency on the device"};
  }
  std::vector<std::string> supported_models() const override { return {"vit_ti_16", "vit_s_16", "vit_b_16"}; }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (const auto& model : streams_models(context)) {
      for (auto params : step_loop_params(context, model)) {
        for (Precision p : {Precision::fp32, Precision::bf16}) {
          Levels with_precision = params;
          with_precision.emplace_back("precision", precision_name(p));
          out.push_back({with_precision,
                         {{"one_stream", {{"branch_streams", "1"}}}, {"two_streams", {{"branch_streams", "2"}}}}});
        }
      }
    }
    return out;
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (auto why = model_code_fixed(model, "runs a ViT block's attention and MLP on two CUDA streams")) return why;
    if (model_family(model) != "vit") {
      return fmt::format(
          "{} is not a ViT: the independent branches under test are the attention and the MLP of a parallel ViT "
          "block; pass --model {}",
          model, fmt::join(supported_models(), ", "));
    }
    if (auto why = branch_streams_unavailable(context.device)) return why;
    return precision_unsupported_reason(context.device, parse_precision(level(c.params, "precision")));
  }

  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.precision = parse_precision(level(c.params, "precision"));
    const bool two = level(arm.levels, "branch_streams") == "2";
    // The streams and their events are made here, once per workload, never in a step.
    auto streams = two ? std::make_shared<BranchStreams>(context.device) : nullptr;
    const auto options = models::ViTOptions::of(spec.model);
    spec.build_model = [options, streams] { return torch::nn::AnyModule(ParallelViT(options, streams)); };
    return with_info(make_training_workload(context, spec),
                     {{"block", "parallel"}, {"branch_streams", two ? 2 : 1}, {"num_layers", options.num_layers}});
  }
};

TIPBENCH_REGISTER_SUITE(Streams);

}  // namespace tipbench::suites
