#include "tipbench/cli.h"

#include "tipbench/commands.h"
#include "tipbench/exit_codes.h"
#include "tipbench/trial.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

namespace tipbench::cli {

namespace {

constexpr const char* kDescription =
    "tipbench: PyTorch training-performance tips as measured A/B experiments (LibTorch).\n"
    "Exit codes: 0 ok, 1 an arm failed (run) or a confirmed regression (gate), 2 usage or input error,\n"
    "3 inconclusive (gate), 4 internal error.";

}  // namespace

int main(const std::vector<std::string>& argv) {
  // The hidden child side of fresh-process trials: `tipbench __trial REQUEST RESPONSE`.
  if (argv.size() == 4 && argv[1] == "__trial") return serve_trial_request(argv[2], argv[3]);

  CLI::App app{kDescription, "tipbench"};
  app.require_subcommand(1, 1);
  app.fallthrough(false);
  const std::vector<Command> commands{add_list_command(app), add_run_command(app, argv),
                                     add_env_command(app), add_data_command(app),
                                     add_baseline_command(app), add_compare_command(app),
                                     add_gate_command(app), add_report_command(app)};

  std::vector<std::string> names;
  for (const auto& command : commands) names.push_back(command.app->get_name());
  const auto usage_error = [&](const std::string& message) {
    std::cerr << message << fmt::format("\nValid subcommands: {}. Run `tipbench <subcommand> --help` for its flags.\n",
                                        fmt::join(names, ", "));
    return exit_code::usage;
  };
  // CLI11 reports a stray word only as "a subcommand is required": name it instead.
  if (argv.size() > 1 && !argv[1].starts_with("-") &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    return usage_error(fmt::format("error: unknown subcommand '{}'", argv[1]));
  }
  std::vector<std::string> reversed(argv.rbegin(), argv.rend() - 1);  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    app.exit(e);
    return usage_error("");
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return exit_code::usage;
}

}  // namespace tipbench::cli
