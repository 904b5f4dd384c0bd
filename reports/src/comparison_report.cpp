#include "tipbench/reports/comparison_report.h"

#include "tipbench/explain/explain.h"
#include "tipbench/gate/explain_checks.h"

#include "tipbench/reports/mfu.h"

#include "tipbench/common/escape.h"
#include "tipbench/reports/format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

namespace tipbench::reports {

namespace {

using gate::CellComparison;
using gate::CellKey;

std::string run_letter(std::size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('A' + i)) : fmt::format("R{}", i + 1);
}

// Everything the tables need, gathered once: cells in the order the runs list them, each run's
// median with its interval, and each later run's comparison with the first.
struct Table {
  std::vector<CellKey> keys;
  std::vector<std::map<CellKey, stats::MedianInterval>> values;  // per run
  std::vector<std::map<CellKey, CellComparison>> changes;        // per run (index 0 empty)
  std::vector<gate::RunComparison> comparisons;                  // per later run
};

Table gather(const std::vector<NamedRun>& runs, const gate::CompareOptions& options) {
  Table t;
  t.values.resize(runs.size());
  t.changes.resize(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto& cell : gate::extract_cells(runs[r].result)) {
      if (std::find(t.keys.begin(), t.keys.end(), cell.key) == t.keys.end()) t.keys.push_back(cell.key);
      t.values[r][cell.key] = stats::median_interval(
          cell.values(), {.resamples = options.resamples, .confidence = options.confidence, .seed = options.seed});
    }
  }
  t.comparisons = compare_to_reference(runs, options);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    for (const auto& c : t.comparisons[r - 1].cells) t.changes[r][c.key] = c;
  }
  return t;
}

std::string value_text(const std::string& metric, const stats::MedianInterval& v) {
  return fmt::format("{} [{}, {}]", format_metric_value(metric, v.median), format_metric_value(metric, v.ci_low),
                     format_metric_value(metric, v.ci_high));
}

bool noisy(const CellComparison& c, double threshold) { return c.cv > threshold / 2; }

std::string verdict_text(const CellComparison& c, double threshold) {
  return verdict_label(c.key.metric, c.verdict) + (noisy(c, threshold) ? " [noisy]" : "");
}

// Positive = worse, in the metric's own direction.
double badness(const CellComparison& c) { return gate::higher_is_better(c.key.metric) ? -c.delta() : c.delta(); }

// What differs from run A's fingerprint, with both values: "libtorch_version 2.11.0 -> 2.15.0, ...".
std::string changes_from_first(const std::vector<NamedRun>& runs, std::size_t i) {
  return fingerprint_changes_text(runs.front().result.context.fingerprint, runs[i].result.context.fingerprint);
}

std::string run_line(std::size_t i, const NamedRun& run, const std::vector<NamedRun>& runs) {
  const auto& ctx = run.result.context;
  std::string line = fmt::format("{}  {}  {}  {}  {}  git {}{}", run_letter(i), run.label, ctx.fingerprint_slug,
                                 ctx.device, ctx.timestamp_utc, ctx.git.sha.empty() ? "-" : ctx.git.sha.substr(0, 12),
                                 ctx.git.dirty ? " (dirty)" : "");
  if (i > 0) {
    const auto changes = changes_from_first(runs, i);
    if (!changes.empty()) line += "  [DIFFERENT FINGERPRINT than A: " + changes + "]";
  }
  if (ctx.settings.inject_slowdown_pct > 0) {
    line += fmt::format("  [INJECTED SLOWDOWN {:g}%: not a real measurement]", ctx.settings.inject_slowdown_pct);
  }
  return line;
}

// Under a throughput change with a verdict, when both runs recorded step breakdowns (`run
// --explain`): which ops made it (explain.h).
void print_why(const std::vector<NamedRun>& runs, std::size_t r, const gate::CellKey& key, const Table& t,
               const gate::CompareOptions& options, std::FILE* out) {
  if (r == 0 || key.metric != gate::kThroughput) return;
  if (runs[0].result.context.settings.explain_steps <= 0 || runs[r].result.context.settings.explain_steps <= 0) return;
  const auto c = t.changes[r].find(key);
  if (c == t.changes[r].end() || c->second.verdict == stats::Verdict::no_significant_difference) return;
  const auto why = gate::explain_cell(key, runs[0].result, runs[r].result, options.paired);
  fmt::print(out, "       why:\n");
  for (const auto& line : explanation_lines(why)) fmt::print(out, "         {}\n", line);
}

}  // namespace

void print_comparison(const std::vector<NamedRun>& runs, const gate::CompareOptions& options, std::FILE* out) {
  const Table t = gather(runs, options);
  fmt::print(out, "Runs ({} is the reference; changes are against it, {} paired):\n", run_letter(0),
             options.paired ? "blocks" : "not");
  for (std::size_t i = 0; i < runs.size(); ++i) fmt::print(out, "  {}\n", run_line(i, runs[i], runs));
  std::string current_case;
  for (const auto& key : t.keys) {
    const std::string arm = key.case_name + "/arm:" + key.arm;
    if (arm != current_case) {
      fmt::print(out, "\n{}\n", arm);
      current_case = arm;
    }
    fmt::print(out, "  {}\n", metric_heading(key.metric));
    for (std::size_t r = 0; r < runs.size(); ++r) {
      auto v = t.values[r].find(key);
      if (v == t.values[r].end()) {
        fmt::print(out, "    {}  -\n", run_letter(r));
        continue;
      }
      std::string change;
      if (auto c = t.changes[r].find(key); c != t.changes[r].end()) {
        change =
            fmt::format("   {}  {}", format_delta(c->second), verdict_text(c->second, options.practical_threshold));
      } else if (r > 0) {
        change = "   (not comparable: too few blocks or absent in A)";
      }
      fmt::print(out, "    {}  {}{}\n", run_letter(r), value_text(key.metric, v->second), change);
      print_why(runs, r, key, t, options, out);
    }
  }
  fmt::print(out,
             "\nValues: median over blocks [95% bootstrap interval]. Changes: ratio of medians to {} "
             "[95% interval], a verdict needs the interval to exclude 0 and at least {:g}%.\n",
             run_letter(0), 100 * options.practical_threshold);
  if (!options.paired && options.between_runs && options.between_runs->floor > 0) {
    fmt::print(out,
               "Between runs: each run's own interval holds only the noise of its blocks; two runs also differ by "
               "what every block of one run shares (boot, clocks, memory layout), so each change's interval "
               "includes a between-run SD of at least {:.2f}% per run (--between-run-pct).\n",
               100 * options.between_runs->floor);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto banner = injected_slowdown_banner(runs[i].result);
    if (!banner.empty()) fmt::print(out, "{}: {}\n", run_letter(i), banner);
  }
  // What each run said about itself (a partial or resumed run, a loaded machine): its reader
  // weighs the changes by it.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& w : runs[i].result.context.warnings) fmt::print(out, "{}: warning: {}\n", run_letter(i), w);
  }
}

std::string comparison_markdown(const std::vector<NamedRun>& runs, const gate::CompareOptions& options) {
  const Table t = gather(runs, options);
  std::string md =
      "### tipbench comparison\n\n| run | file | fingerprint | device | time (UTC) | git "
      "|\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& ctx = runs[i].result.context;
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", run_letter(i), markdown_escape(runs[i].label),
                      markdown_escape(ctx.fingerprint_slug), markdown_escape(ctx.device),
                      markdown_escape(ctx.timestamp_utc), markdown_escape(ctx.git.sha.substr(0, 12)));
  }
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto changes = changes_from_first(runs, i);
    if (!changes.empty()) {
      md += fmt::format("\n> **{} ran on a different fingerprint than A**: {}\n", run_letter(i),
                        markdown_escape(changes));
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto banner = injected_slowdown_banner(runs[i].result);
    if (!banner.empty()) md += fmt::format("\n> **{}**: {}\n", run_letter(i), markdown_escape(banner));
    for (const auto& w : runs[i].result.context.warnings) {
      md += fmt::format("\n> {}: warning: {}\n", run_letter(i), markdown_escape(w));
    }
  }
  // Worst change first: the largest bad-direction change over the later runs.
  std::vector<std::pair<double, CellKey>> order;
  for (const auto& key : t.keys) {
    double worst = -1e9;
    for (std::size_t r = 1; r < runs.size(); ++r) {
      if (auto c = t.changes[r].find(key); c != t.changes[r].end()) worst = std::max(worst, badness(c->second));
    }
    order.emplace_back(worst, key);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  md += "\n| cell | metric |";
  std::string rule = "\n|---|---|";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    md += fmt::format(" {} |", run_letter(r));
    rule += "---:|";
    if (r > 0) {
      md += fmt::format(" Δ {} vs A (95% CI) | verdict |", run_letter(r));
      rule += "---:|---|";
    }
  }
  md += rule + "\n";
  for (const auto& [worst, key] : order) {
    md += fmt::format("| {} | {} |", markdown_escape(key.case_name + "/arm:" + key.arm),
                      markdown_escape(metric_heading(key.metric)));
    for (std::size_t r = 0; r < runs.size(); ++r) {
      auto v = t.values[r].find(key);
      md += v == t.values[r].end() ? " - |" : fmt::format(" {} |", format_metric_value(key.metric, v->second.median));
      if (r == 0) continue;
      if (auto c = t.changes[r].find(key); c != t.changes[r].end()) {
        const bool bad = c->second.verdict == stats::Verdict::slower;
        md += fmt::format(" {} | {}{}{} |", format_delta(c->second), bad ? "**" : "",
                          verdict_text(c->second, options.practical_threshold), bad ? "**" : "");
      } else {
        md += " - | - |";
      }
    }
    md += "\n";
  }
  md += fmt::format(
      "\nMedian over blocks; Δ is the ratio of medians to A with a 95% {} bootstrap interval; a "
      "verdict needs the interval to exclude 0 and at least {:g}%. `[noisy]`: between-block CV "
      "above half that threshold.\n",
      options.paired ? "paired" : "unpaired", 100 * options.practical_threshold);
  if (!options.paired && options.between_runs && options.between_runs->floor > 0) {
    md += fmt::format(
        "Unpaired runs also differ by what every block of one run shares (boot, clocks, memory layout): each Δ's "
        "interval includes a between-run SD of at least {:.2f}% per run.\n",
        100 * options.between_runs->floor);
  }
  return md;
}

std::string run_markdown(const NamedRun& run) {
  const auto& ctx = run.result.context;
  const auto builds = builds_of(run);
  std::string md =
      fmt::format("### tipbench run {}\n\n`{}` on {}, {} (git {})\n\n", markdown_escape(run.label),
                  markdown_escape(ctx.fingerprint_slug), markdown_escape(ctx.device),
                  markdown_escape(ctx.timestamp_utc), markdown_escape(fmt::format("{}", fmt::join(builds, ", "))));
  for (const auto& part : run.parts) {
    md += fmt::format("- `{}`: {}, git {}{}: {}\n", markdown_escape(part.label), markdown_escape(part.timestamp_utc),
                      markdown_escape(part.git.sha.substr(0, 12)), part.git.dirty ? " (dirty)" : "",
                      markdown_escape(fmt::format("{}", fmt::join(part.suites, ", "))));
  }
  if (!run.parts.empty()) md += "\n";
  if (const auto banner = injected_slowdown_banner(run.result); !banner.empty())
    md += "> **" + markdown_escape(banner) + "**\n\n";
  struct Row {
    std::string case_name;
    const Comparison* comparison;
    const SuiteResult* suite;
  };
  std::vector<Row> rows;
  for (const auto& suite : run.result.suites) {
    for (const auto& c : suite.cases) {
      for (const auto& cmp : c.comparisons) rows.push_back({c.name, &cmp, &suite});
    }
  }
  // Worst first: the lowest throughput ratio, the highest memory ratio.
  auto bad = [](const Comparison* c) {
    return gate::higher_is_better(c->metric) ? 1 - c->estimate.ratio : c->estimate.ratio - 1;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Row& a, const Row& b) { return bad(a.comparison) > bad(b.comparison); });
  // The sources' claim beside each verdict: the findings of a run read against what was promised.
  md +=
      "| case | treatment vs baseline | metric | ratio [95% CI] | verdict | source claim |\n"
      "|---|---|---|---:|---|---|\n";
  for (const auto& row : rows) {
    const Comparison* c = row.comparison;
    const auto& claim = row.suite->source_claim;
    md += fmt::format("| {} | {} vs {} | {} | {} | {}{} | {} |\n", markdown_escape(row.case_name),
                      markdown_escape(c->treatment), markdown_escape(c->baseline), metric_label(c->metric),
                      ratio_with_ci(*c), verdict_label(*c), c->noisy ? " [noisy]" : "",
                      claim ? markdown_escape(fmt::format("({}) {}", claim->sources, claim->claim)) : "-");
  }
  if (rows.empty()) md += "| - | no comparisons in this run | | | | |\n";
  if (const auto mfu = best_mfu_per_model(run.result); !mfu.empty()) {
    md += "\n| model | matrix work | samples/s | TFLOP/s | MFU | measured by |\n|---|---|---:|---:|---:|---|\n";
    for (const auto& row : mfu) {
      md += fmt::format("| {} | {} | {:.1f} | {:.1f} | {} | {} |\n", markdown_escape(row.model),
                        row.mfu.peak_name.empty() ? "-" : row.mfu.peak_name, row.arm->throughput_samples_per_s.median,
                        row.mfu.model_tflops, markdown_escape(mfu_cell(row.mfu)),
                        markdown_escape(row.case_name + "/arm:" + row.arm->arm));
    }
  }
  return md;
}

}  // namespace tipbench::reports
