// `tipbench env`: the fingerprint this machine's results are keyed by, and the environment
// warnings a run would print.
#include "cli/commands.h"

#include "tipbench/machine/environment.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/machine/collect_fingerprint.h"

#include <fmt/format.h>
#include <torch/cuda.h>

namespace tipbench::cli {

Command add_env_command(CLI::App& app) {
  auto* sub = app.add_subcommand("env", "Print this machine's fingerprint (JSON) and environment warnings");
  auto cpu_only = std::make_shared<bool>(false);
  sub->add_flag("--cpu", *cpu_only, "Fingerprint as a CPU run would record it (no GPU fields)");
  return {sub, [cpu_only] {
            const bool gpus = !*cpu_only && torch::cuda::is_available();
            const Fingerprint fp = collect_fingerprint(gpus);
            nlohmann::json j = {{"fingerprint_slug", fingerprint_slug(fp)}, {"fingerprint", fp}};
            fmt::print("{}\n", j.dump(2));
            for (const auto& w : environment_warnings(gpus)) fmt::print(stderr, "warning: {}\n", w);
            return exit_code::ok;
          }};
}

}  // namespace tipbench::cli
