#include "findings_section.h"

#include "tipbench/common/escape.h"
#include "tipbench/reports/findings.h"
#include "tipbench/reports/format.h"
#include "tipbench/reports/mfu.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace tipbench::reports::detail {

namespace {

// "x1.351 [1.351, 1.352] faster" (HTML), "-" when the case has no such comparison.
std::string verdict_cell(const Comparison* cmp) {
  if (!cmp) return "-";
  return fmt::format("<span class=ratio>{}</span> {}{}", html_escape(ratio_with_ci(*cmp)),
                     html_escape(verdict_label(*cmp)), cmp->noisy ? " [noisy]" : "");
}

// One row per treatment of each case: its throughput and memory against the case's baseline.
std::string claim_rows(const SuiteResult& suite) {
  std::string h;
  bool first = true;
  const std::string claim =
      suite.source_claim ? fmt::format("({}) {}", suite.source_claim->sources, suite.source_claim->claim) : "-";
  for (const auto& row : finding_rows(suite)) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{} vs {}</td><td>{}</td><td>{}</td></tr>\n",
                     first ? html_escape(suite.name) : "", first ? html_escape(claim) : "", html_escape(row.levels),
                     html_escape(row.treatment), html_escape(row.baseline), verdict_cell(row.throughput),
                     verdict_cell(row.memory));
    first = false;
  }
  if (first) {
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td colspan=4 class=note>no comparison (every arm skipped, "
        "failed or alone)</td></tr>\n",
        html_escape(suite.name), html_escape(claim));
  }
  return h;
}

// A comparison read the other way round: the baseline against the treatment (x1/r, the interval's
// ends inverted and swapped, faster and slower exchanged).
Comparison inverted(const Comparison& c) {
  Comparison out = c;
  std::swap(out.treatment, out.baseline);
  out.estimate.ratio = 1 / c.estimate.ratio;
  out.estimate.ci_low = 1 / c.estimate.ci_high;
  out.estimate.ci_high = 1 / c.estimate.ci_low;
  if (c.verdict == stats::Verdict::faster) out.verdict = stats::Verdict::slower;
  if (c.verdict == stats::Verdict::slower) out.verdict = stats::Verdict::faster;
  return out;
}

// Per case with a python_eager arm (the same step in Python eager, in the worker): tipbench's C++
// baseline against it, so a reader sees whether the C++ figures are what a Python user gets.
std::string cpp_against_python_table(const Result& result) {
  std::string rows;
  for (const auto& suite : result.suites) {
    for (const auto& c : suite.cases) {
      const ArmResult* python = find_arm(c, "python_eager");
      const Comparison* k = python ? find_comparison(c, python->arm) : nullptr;
      if (!k) continue;
      const Comparison cpp = inverted(*k);
      rows += fmt::format("<tr><td>{}</td><td>{} vs Python eager</td><td>{}</td></tr>\n", html_escape(c.name),
                          html_escape(cpp.treatment), verdict_cell(&cpp));
    }
  }
  if (rows.empty()) return "";
  return "<h3>tipbench's C++ step against Python eager</h3>\n<p class=note>The case's C++ baseline against the "
         "same step in Python eager (the python_eager arm, run in the Python worker and interleaved with it): above "
         "x1 the C++ figures are faster than what a Python user's step gets here.</p>\n"
         "<table><tr><th>case</th><th>comparison</th><th>throughput [95% CI]</th></tr>\n" +
         rows + "</table>\n";
}

std::string mfu_table(const Result& result) {
  const auto rows = best_mfu_per_model(result);
  if (rows.empty()) return "";
  std::string h =
      "<h3>Model FLOP utilisation</h3>\n<p class=note>Per model and the precision its matrix work ran in, the arm "
      "with the most model TFLOP/s: the model's training FLOPs per sample (PyTorch's flop counter, attention "
      "included) &times; samples/s, over the GPU's dense datasheet peak for that precision.</p>\n"
      "<table><tr><th>model</th><th>matrix work</th><th>samples/s</th><th>TFLOP/s</th><th>MFU</th>"
      "<th>measured by</th></tr>\n";
  for (const auto& row : rows) {
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=num>{:.1f}</td><td class=num>{:.1f}</td><td class=num>{}</td>"
        "<td>{}</td></tr>\n",
        html_escape(row.model), html_escape(row.mfu.peak_name.empty() ? "-" : row.mfu.peak_name),
        row.arm->throughput_samples_per_s.median, row.mfu.model_tflops, html_escape(mfu_cell(row.mfu)),
        html_escape(row.case_name + "/arm:" + row.arm->arm));
  }
  return h + "</table>\n";
}

}  // namespace

std::string findings_section(const NamedRun& run) {
  std::string h =
      "<h2>Findings</h2>\n<p class=note>What each suite's claim from the source articles came to here: every "
      "comparison of a treatment with its case's baseline, in the harness's words (faster or slower: "
      "significant and beyond the practical threshold; significant, under the threshold; no detectable "
      "difference).</p>\n<table><tr><th>suite</th><th>source claim</th><th>case</th><th>comparison</th>"
      "<th>throughput [95% CI]</th><th>memory [95% CI]</th></tr>\n";
  for (const auto& suite : run.result.suites) h += claim_rows(suite);
  return h + "</table>\n" + cpp_against_python_table(run.result) + mfu_table(run.result);
}

std::string builds_table(const NamedRun& run) {
  if (run.parts.empty()) return "";
  struct Build {
    std::string git, first, last;
    std::vector<std::string> files, suites;
  };
  std::vector<Build> builds;
  for (const auto& part : run.parts) {
    const std::string git = part.git.sha.substr(0, 12) + (part.git.dirty ? " (dirty)" : "");
    auto it = std::find_if(builds.begin(), builds.end(), [&](const Build& b) { return b.git == git; });
    if (it == builds.end()) {
      builds.push_back({git, part.timestamp_utc, part.timestamp_utc, {}, {}});
      it = builds.end() - 1;
    }
    it->first = std::min(it->first, part.timestamp_utc);
    it->last = std::max(it->last, part.timestamp_utc);
    it->files.push_back(part.label);
    it->suites.insert(it->suites.end(), part.suites.begin(), part.suites.end());
  }
  std::string h = fmt::format(
      "<p class=note>{} files, measured by {} build(s):</p>\n<table><tr><th>git</th><th>time (UTC)</th>"
      "<th>suites</th><th>files</th></tr>\n",
      run.parts.size(), builds.size());
  for (const auto& b : builds) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", html_escape(b.git),
                     html_escape(b.first == b.last ? b.first : b.first + " to " + b.last),
                     html_escape(fmt::format("{}", fmt::join(b.suites, ", "))),
                     html_escape(fmt::format("{}", fmt::join(b.files, ", "))));
  }
  return h + "</table>\n";
}

}  // namespace tipbench::reports::detail
