#include "tipbench/reports/mfu.h"

#include "tipbench/environment/gpu_peaks.h"
#include "tipbench/models/model_flops.h"

#include <fmt/format.h>

#include <algorithm>

namespace tipbench::reports {

namespace {

using json = nlohmann::json;

std::string info_string(const json& info, const char* key) {
  return info.contains(key) && info.at(key).is_string() ? info.at(key).get<std::string>() : "";
}

// Results before 1.10 did not record the FLOPs: a training arm of a reference model at its size
// gets the table's, unless its info shows another workload (a changed architecture, a throughput
// that is not samples, several ranks, changing shapes, an evaluation pass).
bool recorded_before_flops(const Result& result) {
  const SchemaVersion v = parse_schema_version(result.schema_version);
  return v.major == 1 && v.before(1, 10);
}

std::optional<double> flops_per_sample(const Result& result, const ArmResult& arm, const ModelFlops** row) {
  const json& info = arm.info;
  if (!info.is_object() || !info.contains("model") || !info.contains("image_size") ||
      !info.at("image_size").is_number_integer()) {
    return std::nullopt;
  }
  *row = reference_flops(info_string(info, "model"), info.at("image_size").get<std::int64_t>());
  if (info.contains("training_flops_per_sample") && info.at("training_flops_per_sample").is_number()) {
    const double f = info.at("training_flops_per_sample").get<double>();
    return f > 0 ? std::optional<double>(f) : std::nullopt;
  }
  if (!*row || !recorded_before_flops(result) || !info.contains("precision")) return std::nullopt;
  for (const char* other :
       {"hidden_dim", "throughput_unit", "world_size", "dataset", "layers", "block", "model_mode"}) {
    if (info.contains(other)) return std::nullopt;
  }
  if (const auto shapes = info_string(info, "input_shapes"); !shapes.empty() && shapes != "fixed") return std::nullopt;
  return (*row)->training_flops;
}

const GpuInfo* run_gpu(const RunContext& context) {
  if (!context.device.starts_with("cuda") || context.fingerprint.gpus.empty()) return nullptr;
  int index = 0;
  if (const auto colon = context.device.find(':'); colon != std::string::npos) {
    index = std::atoi(context.device.c_str() + colon + 1);
  }
  for (const auto& gpu : context.fingerprint.gpus) {
    if (gpu.index == index) return &gpu;
  }
  return &context.fingerprint.gpus.front();
}

// "bf16", "tf32" or "fp32": where the arm's matrix work ran (PyTorch's defaults where its info
// records no setting: cuDNN TF32 on, matmul precision "highest").
std::string precision_of_matrix_work(const json& info, const ModelFlops* row) {
  const std::string precision = info_string(info, "precision");
  if (precision == "bf16" || precision == "fp16") return "bf16";
  const bool cudnn_tf32 = !info.contains("cudnn_tf32") || info.at("cudnn_tf32") == true;
  const std::string matmul = info.contains("matmul_precision") ? info_string(info, "matmul_precision") : "highest";
  const bool vit = row && row->family == "vit";
  if (vit) return matmul == "highest" ? "fp32" : "tf32";
  return cudnn_tf32 ? "tf32" : "fp32";
}

}  // namespace

std::optional<ArmMfu> arm_mfu(const Result& result, const ArmResult& arm) {
  if (arm.status != ArmStatus::ok || arm.throughput_samples_per_s.median <= 0) return std::nullopt;
  const ModelFlops* row = nullptr;
  const auto flops = flops_per_sample(result, arm, &row);
  if (!flops) return std::nullopt;
  ArmMfu m;
  m.flops_per_sample = *flops;
  m.model_tflops = *flops * arm.throughput_samples_per_s.median / 1e12;
  const GpuInfo* gpu = run_gpu(result.context);
  if (!gpu) {
    m.why_no_mfu = "not a GPU run";
    return m;
  }
  const DensePeaks* peaks = dense_peaks(gpu->name);
  if (!peaks) {
    m.why_no_mfu = fmt::format("no dense peak known for {} (harness/environment/src/gpu_peaks.cpp)", gpu->name);
    return m;
  }
  m.gpu_kind = peaks->kind;
  m.peak_name = precision_of_matrix_work(arm.info, row);
  m.peak_tflops = m.peak_name == "bf16"   ? peaks->bf16_tflops
                  : m.peak_name == "tf32" ? peaks->tf32_tflops
                                          : peaks->fp32_tflops;
  m.mfu = m.model_tflops / m.peak_tflops;
  return m;
}

std::string mfu_cell(const ArmMfu& m) {
  return m.mfu ? fmt::format("{:.1f}% of {:.1f}", 100 * *m.mfu, m.peak_tflops) : m.why_no_mfu;
}

std::string mfu_words(const ArmMfu& m) {
  if (!m.mfu) return fmt::format("{:.1f} TFLOP/s ({})", m.model_tflops, m.why_no_mfu);
  return fmt::format("{:.1f} TFLOP/s, {:.1f}% of {} ({} dense {:.1f})", m.model_tflops, 100 * *m.mfu, m.peak_name,
                     m.gpu_kind, m.peak_tflops);
}

std::vector<ModelMfu> best_mfu_per_model(const Result& result) {
  std::vector<ModelMfu> out;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        const auto m = arm_mfu(result, arm);
        if (!m) continue;
        const std::string model = info_string(arm.info, "model");
        auto it = std::find_if(out.begin(), out.end(), [&](const ModelMfu& row) {
          return row.model == model && row.mfu.peak_name == m->peak_name;
        });
        if (it == out.end()) {
          out.push_back({model, c.name, &arm, *m});
        } else if (m->model_tflops > it->mfu.model_tflops) {
          *it = {model, c.name, &arm, *m};
        }
      }
    }
  }
  return out;
}

}  // namespace tipbench::reports
