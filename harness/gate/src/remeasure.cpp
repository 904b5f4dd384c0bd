#include "tipbench/gate/remeasure.h"

#include "tipbench/gate/explain_checks.h"
#include "tipbench/gate/interleaved_session.h"
#include "tipbench/environment/run_conditions.h"
#include "tipbench/environment/this_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace tipbench::gate {

namespace {

// The `run` arguments a result was made with (after "<binary> run"), for re-measuring it.
std::vector<std::string> run_args_of(const Result& r) {
  const auto& argv = r.context.argv;
  return argv.size() > 2 ? std::vector<std::string>(argv.begin() + 2, argv.end()) : std::vector<std::string>{};
}

// Flagged keys grouped by case, so each case is re-measured once for all its flagged cells.
std::map<std::pair<std::string, std::string>, std::vector<CellKey>> by_case(const std::vector<CellKey>& keys) {
  std::map<std::pair<std::string, std::string>, std::vector<CellKey>> groups;
  for (const auto& k : keys) groups[{k.suite, k.case_name}].push_back(k);
  return groups;
}

const Cell* find_cell(const std::vector<Cell>& cells, const CellKey& key) {
  for (const auto& c : cells) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

// Compares the re-measured cells and keeps those that could be compared.
void collect(const std::vector<CellKey>& keys, const Result& reference, const Result& candidate,
             const GateConfig& config, bool paired, std::map<CellKey, CellComparison>& out) {
  const auto ref_cells = extract_cells(reference);
  const auto cand_cells = extract_cells(candidate);
  for (const auto& key : keys) {
    const auto* r = find_cell(ref_cells, key);
    const auto* c = find_cell(cand_cells, key);
    if (!r || !c) continue;
    CompareOptions options{
        .paired = paired, .resamples = resamples_for(1, config.alpha), .seed = 1, .between_runs = &config.between_runs};
    options.practical_threshold = config.threshold_for(key.suite, key.metric).value_or(0.03);
    if (auto cmp = compare_cell(*r, *c, options)) {
      if (!paired) {  // a re-run far from its reference proves something only under its conditions
        cmp->unequal_conditions =
            conditions_difference(reference.context.conditions, candidate.context.conditions, config.conditions);
      }
      cmp->why = explain_cell(key, reference, candidate, paired);
      out.emplace(key, *cmp);
    }
  }
}

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::find(args.begin(), args.end(), flag) != args.end();
}

// Whether each binary knows `run --explain`, asked once per binary by a dry run.
using ExplainSupport = std::map<std::string, bool>;

// A confirmation run records step breakdowns (`run --explain`) so that the regression it confirms
// is explained, when the binary knows the flag: one older than it gets its arguments as they were.
void ask_for_breakdowns(std::vector<std::string>& args, const std::string& binary, const std::string& work_dir,
                        const std::string& side, ExplainSupport& known) {
  if (has_flag(args, "--explain")) return;
  if (!known.contains(binary)) {
    auto probe = args;
    probe.insert(probe.end(),
                 {"--explain", "--blocks", "1", "--out", fmt::format("{}/explain-probe-{}.json", work_dir, side)});
    known[binary] = child_dry_run(binary, probe, fmt::format("{}/explain-probe-{}.log", work_dir, side)).code == 0;
    if (!known[binary]) {
      fmt::print(stderr,
                 "gate: note: the {} binary cannot record step breakdowns (--explain): its regressions are not "
                 "explained\n",
                 side);
    }
  }
  if (known[binary]) args.push_back("--explain");
}

}  // namespace

std::string binary_of(const Result& r, const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  if (!r.context.argv.empty() && is_executable(r.context.argv.front())) return r.context.argv.front();
  return self_executable_path();
}

Remeasure paired_remeasure(const Result& base, const Result& head, const std::string& work_dir,
                           const GateConfig& config, std::uint64_t seed) {
  return [&base, &head, work_dir, &config, seed,
          known = std::make_shared<ExplainSupport>()](const std::vector<CellKey>& keys) {
    std::map<CellKey, CellComparison> out;
    int n = 0;
    for (const auto& [id, group] : by_case(keys)) {
      SessionPlan plan;
      plan.base_binary = binary_of(base, "");
      plan.head_binary = binary_of(head, "");
      const auto selection = select_case(head, group.front().suite, group.front().case_name);
      plan.base_args = strip_selection(run_args_of(base));
      plan.head_args = strip_selection(run_args_of(head));
      plan.base_args.insert(plan.base_args.end(), selection.begin(), selection.end());
      plan.head_args.insert(plan.head_args.end(), selection.begin(), selection.end());
      ask_for_breakdowns(plan.base_args, plan.base_binary, work_dir, "base", *known);
      ask_for_breakdowns(plan.head_args, plan.head_binary, work_dir, "head", *known);
      plan.blocks = std::max(3, base.context.settings.blocks);
      plan.seed = seed + 7919;  // fresh blocks, not a replay of the first session
      plan.work_dir = work_dir;
      fmt::print(stderr, "gate: re-measuring {} (head vs base, {} blocks) to confirm\n", id.second, plan.blocks);
      const auto again = run_interleaved(plan, fmt::format("confirm{}", n++));
      collect(group, again.base, again.head, config, /*paired=*/true, out);
    }
    return out;
  };
}

Remeasure stored_remeasure(const Result& baseline, const Result& current, const std::string& binary,
                           const std::string& work_dir, const GateConfig& config) {
  return [&baseline, &current, binary, work_dir, &config,
          known = std::make_shared<ExplainSupport>()](const std::vector<CellKey>& keys) {
    std::map<CellKey, CellComparison> out;
    int n = 0;
    for (const auto& [id, group] : by_case(keys)) {
      auto args = strip_selection(run_args_of(current));
      const auto selection = select_case(current, group.front().suite, group.front().case_name);
      args.insert(args.end(), selection.begin(), selection.end());
      args.insert(args.end(),
                  {"--blocks", std::to_string(std::max(3, current.context.settings.blocks)), "--seed", "7919"});
      // Unpaired against the baseline: worth it only when the baseline recorded breakdowns too.
      if (baseline.context.settings.explain_steps > 0) ask_for_breakdowns(args, binary, work_dir, "current", *known);
      const std::string stem = fmt::format("{}/confirm{}", work_dir, n++);
      fmt::print(stderr, "gate: re-measuring {} with {} to confirm\n", id.second, binary);
      const Result again = run_once(binary, args, stem + ".json", stem + ".log");
      collect(group, baseline, again, config, /*paired=*/false, out);
    }
    return out;
  };
}

}  // namespace tipbench::gate
