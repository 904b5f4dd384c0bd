// A change point's three-way verdict (Pinpoint's "different / same / run more") from the
// interleaved gate (tipbench/gate/interleaved_session.h): the builds on either side are taken
// from a path template ({commit}) or made by the user's build command; both run the series' case
// here, block by block, and the gate (with its confirmation re-measurement) judges that one cell.
// Used by `history detect --confirm` and `history bisect` (docs/history.md). Example:
//   BinarySource source(options, work_dir);
//   const auto v = compare_builds(source.binary_for(before), source.binary_for(after), target, options, dir, "c1");
#pragma once

#include "tipbench/explain/explain.h"
#include "tipbench/gate/cells.h"
#include "tipbench/history/bisect.h"
#include "tipbench/history/detect.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tipbench::history {

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

std::string_view to_string(BuildSameness s);  // "DIFFERENT", "SAME", "RUN MORE"

struct BuildVerdict {
  BuildSameness verdict = BuildSameness::undecided;
  double ratio = 1, low = 1, high = 1;  // head / base of the cell, with its 95% interval (when measured)
  int blocks = 0;                       // per side, in the session that decided
  std::string detail;                   // the gate's one line on the cell, or why it could not run
  // A confirmed regression (DIFFERENT): which ops made it, from the confirmation run's step
  // breakdowns (gate/explain_checks.h); nullopt otherwise.
  std::optional<Explanation> why;
};

// What to run for a series: its cell and device, and the size of change that counts.
struct SeriesTarget {
  gate::CellKey key;
  std::string device;
  double threshold = 0.01;  // a fraction
};

// The target of a change found by detect: the threshold from the options, else half its size
// (at least 1%). Throws InputError for a series this cannot re-run (a model file's).
SeriesTarget target_of(const SeriesChange& change, const std::string& device, const ConfirmOptions& options);

// The binary of a commit: the template's path when it is an executable file, else the build
// command's output there (its log in the work dir). Throws InputError when the template has no
// {commit}, the commit is no git commit or the binary is missing without a build command;
// ChildRunError when the build fails.
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

}  // namespace tipbench::history
