// Internal to the CLI: each subcommand adds itself to the app and returns the action to run
// once parsing succeeded. Options live in the closure, so there is no shared options struct.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tipbench::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_list_command(CLI::App& app);
Command add_run_command(CLI::App& app, const std::vector<std::string>& argv);
Command add_env_command(CLI::App& app);
Command add_baseline_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_gate_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_data_command(CLI::App& app);
Command add_history_command(CLI::App& app);
Command add_advise_command(CLI::App& app, const std::vector<std::string>& argv);

}  // namespace tipbench::cli
