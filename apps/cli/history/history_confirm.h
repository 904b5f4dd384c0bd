// Internal to the CLI: the flags of `history detect --confirm` and `history bisect`, and
// `detect --confirm`'s lines; the confirmation itself is tipbench/history/confirm.h's.
#pragma once

#include "tipbench/history/confirm.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace tipbench::cli {

// The flags of history::ConfirmOptions, on `history detect` (with --confirm) and `history bisect`.
void add_confirm_flags(CLI::App* command, history::ConfirmOptions& options);

// `history detect --confirm`: each new regression's two sides compared. Prints a line per
// regression; returns the exit code (1 when one is confirmed, 3 when one needs more runs, else 0).
int confirm_new_regressions(const history::DetectReport& report,
                            const std::map<std::int64_t, std::string>& device_of_run,
                            const history::ConfirmOptions& options);

}  // namespace tipbench::cli
