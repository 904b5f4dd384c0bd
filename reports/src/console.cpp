#include "tipbench/reports/console.h"

#include "tipbench/reports/findings.h"

#include "tipbench/explain/explain.h"

#include "tipbench/reports/mfu.h"

#include "tipbench/reports/format.h"
#include "tipbench/environment/run_conditions.h"
#include "tipbench/results/summary.h"
#include "tipbench/results/warmup_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>

namespace tipbench::reports {

namespace {

void print_arm(const ArmResult& arm, std::FILE* out) {
  const std::string label = arm.arm + (arm.baseline ? " (baseline)" : "");
  if (arm.status != ArmStatus::ok) {
    fmt::print(out, "    {:<22} {:<8} {}\n", label, to_string(arm.status), arm.reason);
    return;
  }
  const auto& s = arm.step_time_ms;
  const std::string memory = arm.peak_memory_bytes ? human_bytes(*arm.peak_memory_bytes) : "-";
  const std::string cpu = arm.step_cpu_time_ms ? fmt::format("{:.3f}", arm.step_cpu_time_ms->median) : "-";
  fmt::print(out, "    {:<22} {:<8} {:>9.3f} ({:.3f}-{:.3f}) {:>9} {:>12.1f} {:>7} {:>11}\n", label, "ok", s.median,
             s.p10, s.p90, cpu, arm.throughput_samples_per_s.median, percent(arm.throughput_samples_per_s.cv), memory);
}

// "5 blocks, settled outside the band", "20 blocks, unresolved (about 37 would settle it)".
std::string blocks_and_stop(const Comparison& c) {
  std::string text = fmt::format("{} blocks", c.estimate.blocks);
  switch (c.stop) {
    case StopReason::fixed: return text;
    case StopReason::settled_outside: return text + ", settled outside the band";
    case StopReason::settled_inside: return text + ", settled inside the band";
    case StopReason::precise: return text + ", precise";
    case StopReason::unresolved:
      return text + fmt::format(", unresolved (about {} would settle it)", c.blocks_to_resolve);
  }
  return text;
}

void print_comparison(const Comparison& c, std::FILE* out) {
  fmt::print(out, "    {} vs {}: {} {}  {}{}  ({})\n", c.treatment, c.baseline, metric_label(c.metric),
             ratio_with_ci(c), verdict_label(c), c.noisy ? "  [noisy]" : "", blocks_and_stop(c));
}

// The run's speed comparisons that reached the block cap unresolved, and the cap that would
// settle the worst of them.
void print_unresolved_footer(const Result& result, std::FILE* out) {
  int unresolved = 0;
  std::size_t most = 0;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& cmp : c.comparisons) {
        if (cmp.metric != "throughput_samples_per_s" || cmp.stop != StopReason::unresolved) continue;
        ++unresolved;
        most = std::max(most, cmp.blocks_to_resolve);
      }
    }
  }
  if (unresolved == 0) return;
  fmt::print(out,
             "\nunresolved: {} throughput comparison(s) reached {} blocks neither precise to {:g}% nor settled "
             "against the {:g}% band; --max-blocks {} would settle the worst at its present noise.\n",
             unresolved, result.context.settings.blocks, 100 * result.context.settings.precision,
             100 * result.context.settings.practical_threshold, most);
}

// The noisiest comparison of a case, or nullptr when none is noisy.
const Comparison* noisiest(const CaseResult& c) {
  const Comparison* worst = nullptr;
  for (const auto& cmp : c.comparisons) {
    if (cmp.noisy && (!worst || cmp.cv > worst->cv)) worst = &cmp;
  }
  return worst;
}

// One line per case however many of its rows are noisy: the worst CV and the blocks it needs.
void print_case_noise(const CaseResult& c, const MeasureSettings& settings, std::FILE* out) {
  const Comparison* worst = noisiest(c);
  if (!worst) return;
  fmt::print(out, "    noise: between-block CV up to {} ({}): --blocks {} would resolve a {:g}% effect\n",
             percent(worst->cv), metric_label(worst->metric),
             stats::blocks_needed(worst->cv, settings.practical_threshold), 100 * settings.practical_threshold);
}

// The run's footer: how many rows are noisy and the one thing to do about it.
void print_noise_footer(const Result& result, std::FILE* out) {
  const auto& settings = result.context.settings;
  int rows = 0;
  int noisy_rows = 0;
  double worst_cv = 0;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& cmp : c.comparisons) {
        ++rows;
        if (!cmp.noisy) continue;
        ++noisy_rows;
        worst_cv = std::max(worst_cv, cmp.cv);
      }
    }
  }
  if (noisy_rows == 0) return;
  const bool on_cpu = result.context.device == "cpu";
  fmt::print(out,
             "\nnoise: {} of {} comparisons are [noisy] (between-block CV above {}): their verdicts cannot resolve "
             "a {:g}% effect. {}, or raise --blocks (the noisiest needs {}).\n",
             noisy_rows, rows, percent(noisy_cv_limit(settings)), 100 * settings.practical_threshold,
             on_cpu ? "Run on an idle machine with the threads pinned (OMP_NUM_THREADS=1, taskset)"
                    : "Run with the GPU to yourself (no other jobs, clocks steady)",
             stats::blocks_needed(worst_cv, settings.practical_threshold));
}

// The warm-up check (warmup_check.h): arms whose first trial lies beyond their later trials'
// noise, or one line saying none does.
void print_warmup_footer(const Result& result, const ConsoleOptions& options, std::FILE* out) {
  const auto gaps = first_trial_gaps(result.suites, result.context.settings.precision);
  if (gaps.empty()) return;
  const auto [low, high] =
      std::minmax_element(gaps.begin(), gaps.end(), [](const auto& a, const auto& b) { return a.ratio < b.ratio; });
  const auto beyond = std::count_if(gaps.begin(), gaps.end(), [](const auto& g) { return g.beyond_noise; });
  fmt::print(out, "\nwarm-up check: first trial / median of the later trials, {} arm(s): x{:.3f} to x{:.3f}; ",
             gaps.size(), low->ratio, high->ratio);
  if (beyond == 0) {
    fmt::print(out, "all within 3 robust SDs of the later trials (or {:g}%)\n",
               100 * result.context.settings.precision);
    return;
  }
  fmt::print(out, "{} beyond 3 robust SDs and {:g}% (a warm-up that stopped early, or a re-warm that did){}\n", beyond,
             100 * result.context.settings.precision, options.verbose ? ":" : "; --verbose lists them");
  if (!options.verbose) return;
  for (const auto& g : gaps) {
    if (g.beyond_noise) fmt::print(out, "  {}  x{:.3f} (spread {})\n", g.arm, g.ratio, percent(g.spread));
  }
}

// On a GPU: each arm's model TFLOP/s and MFU, where its model FLOPs are known (mfu.h).
void print_mfu(const Result& result, const CaseResult& c, std::FILE* out) {
  if (!result.context.device.starts_with("cuda")) return;
  std::vector<std::string> parts;
  double per_sample = 0;
  for (const auto& arm : c.arms) {
    if (const auto m = arm_mfu(result, arm)) {
      parts.push_back(fmt::format("{} {}", arm.arm, mfu_words(*m)));
      per_sample = m->flops_per_sample;
    }
  }
  if (parts.empty()) return;
  fmt::print(out, "    model FLOPs {:.2f} GFLOP per sample (training step); {}\n", per_sample / 1e9,
             fmt::join(parts, "; "));
}

// `run --explain`: under each throughput comparison, which ops made the difference (explain.h).
void print_explanations(const Result& result, const CaseResult& c, std::FILE* out) {
  if (result.context.settings.explain_steps <= 0) return;
  for (const auto& cmp : c.comparisons) {
    if (cmp.metric != kThroughputMetric) continue;
    const auto* treatment = find_arm(c, cmp.treatment);
    const auto* baseline = find_arm(c, cmp.baseline);
    if (!treatment || !baseline) continue;
    const auto why = explain_arms(*treatment, *baseline, {.paired = true});
    fmt::print(out, "    why {} vs {}:\n", cmp.treatment, cmp.baseline);
    for (const auto& line : explanation_lines(why)) fmt::print(out, "      {}\n", line);
  }
}

// The run's answer, after every case's table: each treatment against its case's baseline, grouped
// by suite, the rows of the report's Findings (findings.h), in columns.
void print_findings(const Result& result, std::FILE* out) {
  std::vector<std::array<std::string, 5>> rows;  // suite, case, treatment vs baseline, ratio, verdict
  for (const auto& suite : result.suites) {
    bool first = true;
    for (const auto& row : finding_rows(suite)) {
      rows.push_back({first ? suite.name : "", row.levels, row.treatment + " vs " + row.baseline,
                      ratio_with_ci(*row.throughput),
                      verdict_label(*row.throughput) + (row.throughput->noisy ? " [noisy]" : "")});
      first = false;
    }
  }
  if (rows.empty()) return;
  const std::array<std::string, 5> head{"suite", "case", "treatment vs baseline", "throughput [95% CI]", "verdict"};
  std::array<std::size_t, 5> width{};
  for (std::size_t i = 0; i < 5; ++i) {
    width[i] = head[i].size();
    for (const auto& r : rows) width[i] = std::max(width[i], r[i].size());
  }
  fmt::print(out, "\nfindings: {} comparison(s), each treatment's throughput against its case's baseline\n",
             rows.size());
  const auto print_row = [&](const std::array<std::string, 5>& r) {
    fmt::print(out, "  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", r[0], width[0], r[1], width[1], r[2], width[2], r[3],
               width[3], r[4]);
  };
  print_row(head);
  for (const auto& r : rows) print_row(r);
}

// A case whose arms ran but gave no comparison says why: fewer than kMinPairedBlocks blocks per arm
// (`--blocks 1`, `--max-blocks 2`, `gate --counts`, a run under Callgrind) is no spread to judge by.
void print_no_comparison_reason(const CaseResult& c, std::FILE* out) {
  if (!c.comparisons.empty()) return;
  std::size_t ok_arms = 0, fewest_blocks = std::numeric_limits<std::size_t>::max();
  for (const auto& arm : c.arms) {
    if (arm.status != ArmStatus::ok) continue;
    ++ok_arms;
    fewest_blocks = std::min(fewest_blocks, arm.trials.size());
  }
  if (ok_arms < 2 || fewest_blocks >= kMinPairedBlocks) return;
  fmt::print(out,
             "    no comparison: {} block{} per arm, and a comparison needs at least {} (its interval comes from the "
             "spread between blocks): --blocks or --max-blocks {} or more\n",
             fewest_blocks, fewest_blocks == 1 ? "" : "s", kMinPairedBlocks, kMinPairedBlocks);
}

}  // namespace

void print_run_summary(const Result& result, std::FILE* out, const ConsoleOptions& options) {
  const std::string injected = injected_slowdown_banner(result);
  if (!injected.empty()) fmt::print(out, "\n{}\n", injected);
  for (const auto& suite : result.suites) {
    fmt::print(out, "\n{} - {}\n", suite.name, suite.description);
    if (const auto claim = source_claim_line(suite); !claim.empty()) fmt::print(out, "  {}\n", claim);
    for (const auto& c : suite.cases) {
      fmt::print(out, "  {}\n", c.name);
      fmt::print(out, "    {:<22} {:<8} {:>9} {:<13} {:>9} {:>12} {:>7} {:>11}\n", "arm", "status", "step ms",
                 "(p10-p90)", "cpu ms", "samples/s", "CV", "peak mem");
      for (const auto& arm : c.arms) print_arm(arm, out);
      print_mfu(result, c, out);
      for (const auto& cmp : c.comparisons) print_comparison(cmp, out);
      print_no_comparison_reason(c, out);
      print_case_noise(c, result.context.settings, out);
      print_explanations(result, c, out);
    }
    for (const auto& note : suite.notes) fmt::print(out, "  {}\n", note);
  }
  print_findings(result, out);
  print_noise_footer(result, out);
  print_warmup_footer(result, options, out);
  print_unresolved_footer(result, out);
  if (const auto loaded = conditions_warning(result.context.conditions); !loaded.empty()) {
    fmt::print(out, "\nconditions: {}\n", loaded);
  }
  for (const auto& w : result.context.warnings) fmt::print(out, "\nwarning: {}\n", w);
  if (!injected.empty()) fmt::print(out, "\n{}\n", injected);
}

}  // namespace tipbench::reports
