// `tipbench gate --baseline FILE|auto --current FILE`: the current run against a stored baseline
// of its own fingerprint (or, with --across-software, of its hardware), unpaired; candidates are
// confirmed by running the current side again.
#include "gate_modes.h"

#include "tipbench/common/exit_codes.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/gate/baseline_store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <vector>

namespace tipbench::cli {

namespace {

// `--baseline auto`: the newest stored baseline for the current run's slug (with --across-software,
// of its hardware) that holds the run's suites; nullopt, after saying so, when there is none.
std::optional<std::string> find_stored_baseline(const GateFlags& f, const Result& current) {
  std::vector<std::string> suites;
  for (const auto& s : current.suites) suites.push_back(s.name);
  const auto found = f.across_software ? gate::find_baseline_for_hardware(f.baselines_dir, current.context.fingerprint,
                                                                          suites, gate::model_sha256_of(current))
                                       : gate::find_baseline(f.baselines_dir, current.context.fingerprint_slug, suites,
                                                             gate::model_sha256_of(current));
  if (!found) {
    std::vector<std::string> slugs;
    for (const auto& b : gate::list_baselines(f.baselines_dir)) slugs.push_back(b.slug);
    fmt::print(stderr,
               "gate: INCONCLUSIVE: no stored baseline for {} {} in {} (stored: {}).\n"
               "Store one with `tipbench baseline save RUN.json` or gate head vs base with "
               "--base-binary/--head-binary.\n",
               f.across_software ? "the hardware of" : "fingerprint", current.context.fingerprint_slug, f.baselines_dir,
               slugs.empty() ? "none" : fmt::format("{}", fmt::join(slugs, ", ")));
    return std::nullopt;
  }
  fmt::print(stderr, "gate: baseline for {}: {}\n", current.context.fingerprint_slug, found->path);
  return found->path;
}

// A stored baseline gates runs of its own fingerprint; with --across-software, of its hardware
// (other software is then the change under test). Throws InputError otherwise.
void check_stored_fingerprints(const GateFlags& f, const Result& baseline, const Result& current,
                               const std::string& baseline_path) {
  const auto& a = baseline.context.fingerprint;
  const auto& b = current.context.fingerprint;
  const bool same_hardware = tipbench::same_hardware(a, b);
  if (baseline.context.fingerprint_slug == current.context.fingerprint_slug) return;
  if (f.across_software && same_hardware) return;
  const std::string changes = fingerprint_changes_text(a, b);
  if (f.across_software) {
    throw InputError(fmt::format(
        "{} is a baseline from other hardware ({} vs the current {}: {}): --across-software lets other software "
        "gate, never other hardware. Use `tipbench compare` to compare across machines",
        baseline_path, baseline.context.fingerprint_slug, current.context.fingerprint_slug, changes));
  }
  throw InputError(fmt::format(
      "{} is a baseline from other {} ({} vs the current {}: {}): a stored baseline only gates runs of its own "
      "fingerprint. {}",
      baseline_path, same_hardware ? "software" : "hardware or software", baseline.context.fingerprint_slug,
      current.context.fingerprint_slug, changes,
      same_hardware ? "Add --across-software to gate this software change against it"
                    : "Use `--baseline auto`, or `tipbench compare` to compare across machines"));
}

// "model file NAME (sha256 0123456789ab)", or "the reference models".
std::string model_of(const Result& r) {
  const std::string sha = gate::model_sha256_of(r);
  if (sha.empty()) return "the reference models";
  return fmt::format("model file {} (sha256 {})", r.context.model_file.value("name", "?"), sha.substr(0, 12));
}

// A stored baseline gates runs of its own model: another model version is the change under test,
// measured interleaved. Throws InputError otherwise.
void check_stored_models(const Result& baseline, const Result& current, const std::string& baseline_path) {
  if (gate::model_sha256_of(baseline) == gate::model_sha256_of(current)) return;
  throw InputError(fmt::format(
      "{} trained {}, the current run {}: results of different models never gate each other; gate two versions "
      "of a model with --base-model-file/--head-model-file",
      baseline_path, model_of(baseline), model_of(current)));
}

// The between-run spread the stored baselines of this fingerprint and model measured, cell by cell
// (between_runs.h); unreadable files are left out (find_baseline names them when they matter).
gate::BetweenRunSpread stored_spread(const GateFlags& f, const Result& baseline) {
  std::vector<Result> runs;
  const std::string model = gate::model_sha256_of(baseline);
  for (const auto& stored : gate::list_baselines(f.baselines_dir)) {
    if (stored.slug != baseline.context.fingerprint_slug || stored.model_sha256 != model) continue;
    try {
      runs.push_back(read_result(stored.path));
    } catch (const InputError&) {
      continue;
    }
  }
  return gate::between_run_spread(runs, 0);
}

}  // namespace

int gate_stored(const GateFlags& f, const gate::GateConfig& config, const Result& current) {
  std::string baseline_path = f.baseline;
  if (f.baseline == "auto") {
    const auto found = find_stored_baseline(f, current);
    if (!found) return exit_code::inconclusive;
    baseline_path = *found;
  }
  const Result baseline = read_result(baseline_path);
  check_result_identity(baseline, baseline_path);
  check_stored_fingerprints(f, baseline, current, baseline_path);
  check_stored_models(baseline, current, baseline_path);
  gate::GateConfig with_spread = config;  // for_device() adds the floor of the device kind
  with_spread.between_runs = stored_spread(f, baseline);
  return verdict_of_files(f, with_spread, baseline, current, baseline_path,
                          [&](const gate::GateConfig& effective, const std::string& work_dir) {
                            return gate::stored_remeasure(baseline, current, gate::binary_of(current, f.rerun_binary),
                                                          work_dir, effective);
                          });
}

}  // namespace tipbench::cli
