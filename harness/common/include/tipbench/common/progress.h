// Progress of a long run on stderr: one rewritten status line on a terminal (suite, arm, block,
// ETA), plain log lines otherwise (CI logs, pipes): one per case between case_started and
// case_finished, one per trial outside a case. Example:
//   tipbench::Progress p(tipbench::Progress::stderr_is_tty());  p.begin(40);
//   p.trial_started("zero_grad", "arm:zero", 1, 8);  ...  p.trial_finished(1.9);
#pragma once

#include <cstdio>
#include <string>

namespace tipbench {

class Progress {
 public:
  // every_trial: a non-terminal gets a line per trial inside a case too (`run --verbose`).
  explicit Progress(bool tty, std::FILE* out = stderr, bool every_trial = false);
  static bool stderr_is_tty();

  void begin(int total_trials);
  void trial_started(const std::string& suite, const std::string& arm, int block, int blocks);
  void trial_finished(double seconds);
  // A case's trials: on a non-terminal one line when it ends ("[12/40] CASE: 8 trials, 4 blocks in
  // 9.1s  ETA 0:30"), none per trial. A case that ran no trial prints nothing.
  void case_started(const std::string& name);
  void case_finished();
  // Trials counted in begin() that will not run (a sequential case settled before its last look).
  void trials_dropped(int trials);
  void note(const std::string& text);  // a line of its own, e.g. "skipped: ..."
  void end();

 private:
  void draw();
  std::string eta_text() const;

  bool tty_;
  std::FILE* out_;
  bool every_trial_;
  int total_ = 0;
  int done_ = 0;
  double elapsed_s_ = 0;
  std::string current_;
  bool line_open_ = false;
  std::string case_;  // the case under way ("" outside one)
  int case_trials_ = 0, case_blocks_ = 0;
  double case_s_ = 0;
};

}  // namespace tipbench
