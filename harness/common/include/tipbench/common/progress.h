// Progress of a long run on stderr: one rewritten status line on a terminal (suite, arm, block,
// ETA), plain log lines otherwise (CI logs, pipes). Example:
//   tipbench::Progress p(tipbench::Progress::stderr_is_tty());  p.begin(40);
//   p.trial_started("zero_grad", "arm:zero", 1, 8);  ...  p.trial_finished(1.9);
#pragma once

#include <cstdio>
#include <string>

namespace tipbench {

class Progress {
 public:
  explicit Progress(bool tty, std::FILE* out = stderr);
  static bool stderr_is_tty();

  void begin(int total_trials);
  void trial_started(const std::string& suite, const std::string& arm, int block, int blocks);
  void trial_finished(double seconds);
  // Trials counted in begin() that will not run (a sequential case settled before its last look).
  void trials_dropped(int trials);
  void note(const std::string& text);  // a line of its own, e.g. "skipped: ..."
  void end();

 private:
  void draw();
  std::string eta_text() const;

  bool tty_;
  std::FILE* out_;
  int total_ = 0;
  int done_ = 0;
  double elapsed_s_ = 0;
  std::string current_;
  bool line_open_ = false;
};

}  // namespace tipbench
