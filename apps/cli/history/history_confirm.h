// Internal to the CLI: a change point's three-way verdict (Pinpoint's "different / same / run
// more") from our interleaved gate. The builds on either side are taken from a path template
// ({commit}) or made by the user's build command; both run the series' case here, block by
// block, and the gate (with its confirmation re-measurement) judges that one cell. Used by
// `history detect --confirm` and `history bisect` (docs/history.md). Example:
//   BinarySource source(options, work_dir);
//   const auto v = compare_builds(source.binary_for(before), source.binary_for(after), target, options, dir);
#pragma once

#include "tipbench/gate/cells.h"
#include "tipbench/history/detect.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace tipbench::cli {

struct ConfirmOptions {
  std::string binaries;  // path template: {commit} becomes the full commit SHA
  std::string build;     // shell command that makes a missing binary ($TIPBENCH_COMMIT, $TIPBENCH_BINARY)
  std::string device;    // "" = the device of the series' runs
  int blocks = 6;        // per side, doubled while the verdict is "run more", up to max_blocks
  int max_blocks = 24;
  double threshold_pct = 0;  // 0 = half the change found, at least 1%
  bool full = false;
  std::string out_dir;  // "" = results/history/<command>-<UTC time>
  std::uint64_t seed = 0;
};

// The flags above, on `history detect` (with --confirm) and `history bisect`.
void add_confirm_flags(CLI::App* command, ConfirmOptions& options);

enum class Sameness { different, same, run_more };
std::string_view to_string(Sameness s);  // "DIFFERENT", "SAME", "RUN MORE"

struct BuildVerdict {
  Sameness verdict = Sameness::run_more;
  double ratio = 1, low = 1, high = 1;  // head / base of the cell, with its 95% interval (when measured)
  int blocks = 0;                       // per side, in the session that decided
  std::string detail;                   // the gate's one line on the cell, or why it could not run
};

// What to run for a series: its cell and device, and the size of change that counts.
struct SeriesTarget {
  gate::CellKey key;
  std::string device;
  double threshold = 0.01;  // a fraction
};

// The target of a change found by detect: the threshold from the options, else half its size
// (at least 1%). Throws UsageError for a series this cannot re-run (a model file's).
SeriesTarget target_of(const history::SeriesChange& change, const std::string& device, const ConfirmOptions& options);

// The binary of a commit: the template's path when it is an executable file, else the build
// command's output there (its log in the work dir). Throws UsageError when the template has no
// {commit} or the binary is missing without a build command; ChildRunError when the build fails.
class BinarySource {
 public:
  BinarySource(ConfirmOptions options, std::string work_dir);
  std::string binary_for(const std::string& commit);

 private:
  ConfirmOptions options_;
  std::string work_dir_;
  std::map<std::string, std::string> built_;
};

// Base vs head build on the target's cell, interleaved; "run more" doubles the blocks until
// max_blocks. `tag` names the session's folder in work_dir. Throws ChildRunError, ChildInterrupted.
BuildVerdict compare_builds(const std::string& base_binary, const std::string& head_binary, const SeriesTarget& target,
                            const ConfirmOptions& options, const std::string& work_dir, const std::string& tag);

// results/history/<what>-<UTC time>, or the options' out dir.
std::string confirm_work_dir(const ConfirmOptions& options, const std::string& what);

// `history detect --confirm`: each new regression's two sides compared. Prints a line per
// regression; returns the exit code (1 when one is confirmed, 3 when one needs more runs, else 0).
int confirm_new_regressions(const history::DetectReport& report,
                            const std::map<std::int64_t, std::string>& device_of_run, const ConfirmOptions& options);

}  // namespace tipbench::cli
