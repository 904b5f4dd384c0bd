// For tests of the result document: a result with every part of the schema filled in (optional
// fields both present and absent), and an expectation on an exception's type and message. Example:
//   const auto r = tipbench::testing::sample_result();
//   expect_throw_containing<tipbench::InputError>([&] { tipbench::read_result(p); }, {p, "schema"});
#pragma once

#include "tipbench/results/result.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tipbench::testing {

// Expects `fn` to throw exactly E (or a subclass) whose message contains every one of `needles`.
template <typename E>
inline void expect_throw_containing(const std::function<void()>& fn, const std::vector<std::string>& needles) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& n : needles) {
      EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// A result with every part of the schema filled in, optional fields both present and absent.

inline Trial make_trial(int block, int position, double step_ms, std::int64_t samples, int steps) {
  Trial t;
  t.block = block;
  t.position = position;
  t.warmup_steps = 7 + block;
  t.warmup_stable = block % 2 == 0;
  t.samples_per_step = samples;
  for (int i = 0; i < steps; ++i) t.step_times_ms.push_back(step_ms * (1 + 0.001 * i) + 0.1 / 3);
  t.throughput_samples_per_s = 1000.0 * static_cast<double>(samples) / step_ms;
  return t;
}

inline Result sample_result() {
  Result r;
  auto& c = r.context;
  c.tipbench_version = "0.1.0";
  c.fingerprint.gpus = {tipbench::GpuInfo{0, "NVIDIA H100 80GB HBM3", "9.0", 85'045'477'376, 132}};
  c.fingerprint.driver_version = "580.95.05";
  c.fingerprint.cuda_runtime_version = "13.0";
  c.fingerprint.cuda_driver_api_version = "13.0";
  c.fingerprint.cudnn_version = "9.19.0";
  c.fingerprint.nccl_version = "2.28.9";
  c.fingerprint.libtorch_version = "2.11.0";
  c.fingerprint.cpu_model = "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz";
  c.fingerprint.cpu_cores = 208;
  c.fingerprint.os = "Ubuntu 22.04.5 LTS, Linux 6.8.0 x86_64";
  c.fingerprint.compiler = "GCC 12.2.0";
  c.fingerprint.build_type = "Release";
  c.fingerprint_slug = "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0";
  c.git = {"0123456789abcdef0123456789abcdef01234567", true};
  c.argv = {"tipbench", "run", "--quick", "--out", "x y.json"};
  c.timestamp_utc = "2026-11-21T09:14:03Z";
  c.hostname = "gpu-node-7";
  c.device = "cuda:0";
  c.settings = tipbench::quick_settings();
  c.settings.seed = 42;
  c.warnings = {"CPU governor is powersave: set it to performance", "ünïcode \"quoted\""};

  tipbench::SuiteResult s;
  s.name = "zero_grad";
  s.description = "optimizer.zero_grad(): none vs zero";
  s.source_claim = tipbench::SourceClaim{"002", "\"moderately improves performance\" | less memory"};
  s.isolation = "in_process";
  CaseResult cr;
  cr.name = "zero_grad/model:resnet18/batch:64";
  cr.params = {{"model", "resnet18"}, {"batch", "64"}};

  ArmResult base;
  base.name = cr.name + "/arm:none";
  base.arm = "none";
  base.baseline = true;
  base.levels = {{"set_to_none", "true"}};
  base.info = {{"parameters", 11689512}, {"input_shape", {64, 3, 224, 224}}, {"note", "x"}};
  ArmResult treat = base;
  treat.name = cr.name + "/arm:zero";
  treat.arm = "zero";
  treat.baseline = false;
  treat.levels = {{"set_to_none", "false"}};
  for (int b = 0; b < 3; ++b) {
    Trial tb = make_trial(b, b % 2, 10.0 + b, 64, 5);
    tb.memory.peak_allocated_bytes = 1'000'000'000 + b;
    tb.memory.peak_reserved_bytes = 2'000'000'000'000LL + b;  // beyond 32 bits
    tb.memory.timed_peak_allocated_bytes = 900'000'000 + b;
    tb.metrics = {{"data_wait_fraction", 0.31 + 0.01 * b}, {"h2d_copy_ms", 1.9}};
    base.trials.push_back(tb);
    Trial tt = make_trial(b, 1 - b % 2, 11.0 + b, 64, 6);
    tt.memory.peak_allocated_bytes = 1'100'000'000 + b;
    tt.step_cpu_times_ms.assign(6, 21.5 + b);  // as a CPU run records them
    if (b == 0) {                              // `run --explain` (1.12): a step breakdown with every part filled in
      tipbench::StepBreakdown bd;
      bd.steps = 3;
      bd.step_ms = 12.5;
      bd.keys = {{"forward", "aten::mkldnn_convolution", 4.25, 4, {{"sm90_xmma_fprop", 4.0, 4}}},
                 {"step", tipbench::kOutsideOps, 0.125, 0, {}}};
      bd.gpu_idle_host_wait_ms = 0.5;
      bd.gpu_idle_other_ms = 0.25;
      bd.memory_device = "cuda";
      bd.peak_bytes = 3'000'000'000LL;
      bd.peak = {{"step", tipbench::kLiveBefore, 2'000'000'000LL},
                 {"forward", "aten::mkldnn_convolution", 1'000'000'000LL}};
      tt.breakdown = bd;
      // Counted work (1.14), with every CUDA part filled in.
      tipbench::StepCounts counts;
      counts.steps = 2;
      counts.ops_per_step = 412;
      counts.top_level_ops_per_step = 131;
      counts.ops = {{"aten::add_", 50, 0}, {"aten::mkldnn_convolution", 4, 0}};
      counts.allocations_per_step = 145;
      counts.allocated_bytes_per_step = 30'515'364;
      counts.kernels_per_step = 96;
      counts.kernels = {{"sm90_xmma_fprop", 4, 0}};
      counts.copies = {{"Memcpy HtoD", 1, 1'048'576}};
      counts.memsets_per_step = 2;
      counts.syncs_per_step = 1;
      counts.syncs = {{"cudaStreamSynchronize", 1, 0}};
      counts.instructions_per_step = 141'165'412;  // 1.15
      counts.instructions_spread = 0.00015;        // 1.16
      counts.instructions_onednn_isa = "AVX";      // 1.16
      counts.instruction_counter = "perf_event";
      tt.counts = counts;
    }
    treat.trials.push_back(tt);
  }
  tipbench::summarize_arm(base);
  tipbench::summarize_arm(treat);
  tipbench::ArmProfile profile;
  profile.trace_file = "traces/zero_grad.model-resnet18.batch-64.arm-zero.trace.json";
  profile.steps = 5;
  profile.top_cpu_ops = {{"aten::mkldnn_convolution", 4.25, 20}, {"aten::addmm", 0.5, 1}};
  profile.top_cuda_kernels = {{"sm90_xmma_gemm", 1.125, 3}};
  treat.profile = profile;
  tipbench::ArmProfile failed_profile;
  failed_profile.steps = 5;
  failed_profile.error = "profiler unavailable";
  base.profile = failed_profile;

  ArmResult skipped;
  skipped.name = cr.name + "/arm:other";
  skipped.arm = "other";
  skipped.levels = {{"set_to_none", "maybe"}};
  skipped.status = ArmStatus::skipped;
  skipped.reason = "needs CUDA";
  ArmResult failed = skipped;
  failed.arm = "broken";
  failed.status = ArmStatus::failed;
  failed.reason = "out of memory";
  failed.trials.push_back(make_trial(0, 0, 3.0, 8, 2));  // a failing arm keeps what it measured

  cr.arms = {base, treat, skipped, failed};
  Comparison cmp;
  cmp.treatment = "zero";
  cmp.baseline = "none";
  cmp.metric = "throughput_samples_per_s";
  cmp.estimate = {0.912345678901, 0.9, 0.93, 3};
  cmp.verdict = tipbench::stats::Verdict::slower;
  cmp.cv = 0.0625;
  cmp.noisy = true;
  cmp.recommendation = "re-run with --blocks 40";
  Comparison cpu = cmp;
  cpu.metric = "step_cpu_time_ms";
  cpu.estimate = {1.05, 1.01, 1.08, 3};
  Comparison mem = cmp;
  mem.metric = "peak_allocated_bytes";
  mem.estimate = {1.1, 1.09, 1.11, 3};
  mem.verdict = tipbench::stats::Verdict::no_significant_difference;
  mem.noisy = false;
  mem.recommendation = "";
  cr.comparisons = {cmp, cpu, mem};
  s.cases.push_back(cr);

  tipbench::SuiteResult empty;  // a suite whose every case was skipped still has its row
  empty.name = "cudnn_benchmark";
  empty.description = "cudnn.benchmark off vs on";
  empty.isolation = "fresh_process";
  r.suites = {s, empty};
  return r;
}

// A valid document as text, for the tests that break it.
inline std::string sample_text() { return tipbench::to_json_document(sample_result()).dump(2); }

}  // namespace tipbench::testing
