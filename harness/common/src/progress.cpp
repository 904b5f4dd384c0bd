#include "tipbench/common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace tipbench {

Progress::Progress(bool tty, std::FILE* out, bool every_trial) : tty_(tty), out_(out), every_trial_(every_trial) {}

bool Progress::stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::begin(int total_trials) {
  total_ = total_trials;
  done_ = 0;
  elapsed_s_ = 0;
}

void Progress::trial_started(const std::string& suite, const std::string& arm, int block, int blocks) {
  current_ = fmt::format("[{}/{}] {} {} block {}/{}", done_ + 1, total_, suite, arm, block + 1, blocks);
  case_blocks_ = std::max(case_blocks_, block + 1);
  draw();
}

void Progress::trial_finished(double seconds) {
  ++done_;
  elapsed_s_ += seconds;
  ++case_trials_;
  case_s_ += seconds;
  if (!tty_ && (case_.empty() || every_trial_))
    fmt::print(out_, "{} done in {:.1f}s{}\n", current_, seconds, eta_text());
}

void Progress::case_started(const std::string& name) {
  case_ = name;
  case_trials_ = case_blocks_ = 0;
  case_s_ = 0;
}

void Progress::case_finished() {
  if (!tty_ && case_trials_ > 0) {
    fmt::print(out_, "[{}/{}] {}: {} trials, {} block{} in {:.1f}s{}\n", done_, total_, case_, case_trials_,
               case_blocks_, case_blocks_ == 1 ? "" : "s", case_s_, eta_text());
    std::fflush(out_);
  }
  case_.clear();
}

void Progress::trials_dropped(int trials) { total_ = std::max(done_, total_ - trials); }

void Progress::note(const std::string& text) {
  if (line_open_) fmt::print(out_, "\r\033[K");
  line_open_ = false;
  fmt::print(out_, "{}\n", text);
  std::fflush(out_);
}

void Progress::end() {
  if (line_open_) fmt::print(out_, "\r\033[K");
  line_open_ = false;
  std::fflush(out_);
}

void Progress::draw() {
  if (!tty_) return;
  fmt::print(out_, "\r\033[K{}{}", current_, eta_text());
  line_open_ = true;
  std::fflush(out_);
}

// The mean trial time so far times the trials left: trials of one run are alike enough.
std::string Progress::eta_text() const {
  if (done_ == 0 || total_ <= done_) return "";
  const auto left = static_cast<long>(elapsed_s_ / done_ * (total_ - done_) + 0.5);
  return fmt::format("  ETA {}:{:02}", left / 60, left % 60);
}

}  // namespace tipbench
