#include "cli/cli.h"

#include "cli/commands.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/measure/fresh_arm_check.h"
#include "tipbench/results/result.h"
#include "tipbench/machine/run_context.h"
#include "tipbench/measure/trial.h"

#include "cli/shared/model_file_setup.h"

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

// The subcommand (or sub-subcommand, e.g. `baseline save`) the user typed, if any.
const CLI::App* typed_subcommand(const std::vector<Command>& commands, const std::vector<std::string>& argv) {
  if (argv.size() < 2) return nullptr;
  for (const auto& command : commands) {
    if (command.app->get_name() != argv[1]) continue;
    const CLI::App* sub = command.app;
    if (argv.size() > 2) {
      for (const auto* nested : sub->get_subcommands([](const CLI::App*) { return true; })) {
        if (nested->get_name() == argv[2]) return nested;
      }
    }
    return sub;
  }
  return nullptr;
}

std::string sub_path(const CLI::App* sub) {
  const auto* parent = sub->get_parent();
  return parent && parent->get_parent() ? parent->get_name() + " " + sub->get_name() : sub->get_name();
}

std::vector<std::string> flag_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const auto* option : sub.get_options()) {
    if (option->get_positional() || option->get_name() == "--help") continue;
    names.push_back(option->get_name());
  }
  return names;
}

// The last line of defence: whatever a subcommand throws becomes one line and an exit code,
// never std::terminate's "terminate called after throwing" (exit 134) or a backtrace.
int run_guarded(const Command& command) {
  try {
    return command.run();
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: tipbench {} could not finish: {}\n", command.app->get_name(), error_summary(e));
    return exit_code::internal;
  } catch (...) {
    fmt::print(stderr, "error: tipbench {} could not finish (an unknown error)\n", command.app->get_name());
    return exit_code::internal;
  }
}

}  // namespace

int main(const std::vector<std::string>& argv) {
  // The hidden child side of fresh-process trials: `tipbench __trial REQUEST RESPONSE`.
  if (argv.size() == 4 && argv[1] == "__trial") {
    return serve_trial_request(argv[2], argv[3], [](const nlohmann::json& setup) { apply_process_setup(setup); });
  }
  // The device bundle's check (docs/gpu.md): `tipbench __fresh-arms DEVICE [SUITE...]`.
  if (argv.size() >= 3 && argv[1] == "__fresh-arms") {
    try {
      return check_first_arms_in_fresh_processes(self_executable_path(), argv[2], {argv.begin() + 3, argv.end()});
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: tipbench __fresh-arms could not finish: {}\n", error_summary(e));
      return exit_code::internal;
    }
  }

  CLI::App app{kDescription, "tipbench"};
  app.require_subcommand(1, 1);
  app.fallthrough(false);
  // Flag errors too are one `error: ...` line, as every other error is (docs/cli.md).
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return fmt::format("error: {}\n", e.what()); });
  const std::vector<Command> commands{
      add_list_command(app),     add_run_command(app, argv),   add_env_command(app),  add_data_command(app),
      add_baseline_command(app), add_compare_command(app),     add_gate_command(app), add_report_command(app),
      add_history_command(app),  add_advise_command(app, argv)};

  std::vector<std::string> names;
  for (const auto& command : commands) names.push_back(command.app->get_name());
  const auto usage_error = [&](const std::string& message) {
    std::cerr << message
              << fmt::format("\nValid subcommands: {}. Run `tipbench <subcommand> --help` for its flags.\n",
                             fmt::join(names, ", "));
    return exit_code::usage;
  };
  // CLI11 reports a stray word only as "a subcommand is required": name it instead.
  if (argv.size() > 1 && !argv[1].starts_with("-") && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    return usage_error(fmt::format("error: unknown subcommand '{}'", argv[1]));
  }
  std::vector<std::string> reversed(argv.rbegin(), argv.rend() - 1);  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    app.exit(e);
    // A bad flag of a subcommand: name that subcommand's flags, not the list of subcommands. A
    // bad value of a known flag has said all there is to say.
    const auto* sub = typed_subcommand(commands, argv);
    if (sub && dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return exit_code::usage;
    if (sub) {
      std::cerr << fmt::format("Valid flags of `tipbench {}`: {}. Run `tipbench {} --help` for what they do.\n",
                               sub_path(sub), fmt::join(flag_names(*sub), ", "), sub_path(sub));
      return exit_code::usage;
    }
    return usage_error("");
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) return run_guarded(command);
  }
  return exit_code::usage;
}

}  // namespace tipbench::cli
