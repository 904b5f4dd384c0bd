#include "gate_flags.h"

#include "tipbench/suite/registry.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tipbench::cli {

namespace {

const std::set<std::string> kInterleavedOnly{"--suite",
                                             "--model",
                                             "--device",
                                             "--full",
                                             "--run-arg",
                                             "--head-inject-slowdown",
                                             "--head-inject-slowdown-op",
                                             "--blocks",
                                             "--counts",
                                             "--head-inject-extra-ops"};
const std::set<std::string> kStoredOnly{"--baseline",        "--current",       "--paired",
                                        "--across-software", "--baselines-dir", "--rerun-binary"};

}  // namespace

void check_mode_flags(const GateFlags& f, bool interleaved) {
  for (const auto& flag : interleaved ? kStoredOnly : kInterleavedOnly) {
    if (!f.given.contains(flag)) continue;
    if (flag == "--across-software") {
      throw UsageError(
          "--across-software applies to a stored baseline; --base-binary/--head-binary run both sides "
          "here, and a software difference between them is already the change under test");
    }
    throw UsageError(interleaved ? fmt::format("{} applies to a stored baseline (--baseline, --current), not to "
                                               "--base-binary/--head-binary",
                                               flag)
                                 : fmt::format("{} applies to an interleaved session (--base-binary, --head-binary), "
                                               "not to --baseline/--current",
                                               flag));
  }
}

gate::GateConfig load_config(const GateFlags& f) {
  gate::GateConfig config = f.config_path.empty() ? gate::GateConfig{} : gate::read_gate_config(f.config_path);
  const auto known = suite_names();
  for (const auto& s : config.suite_names()) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      throw InputError(
          fmt::format("{}: unknown suite '{}' in suites; valid: {}", f.config_path, s, fmt::join(known, ", ")));
    }
  }
  if (f.threshold_pct > 0) {  // one threshold for everything gated
    for (auto& [metric, t] : config.metrics) t = f.threshold_pct / 100;
    for (auto& [metric, t] : config.cpu_metrics) t = f.threshold_pct / 100;
    for (auto& [suite, metrics] : config.suites) {
      for (auto& [metric, t] : metrics) {
        if (t > 0) t = f.threshold_pct / 100;
      }
    }
  }
  if (f.alpha > 0) config.alpha = f.alpha;
  return config;
}

}  // namespace tipbench::cli
