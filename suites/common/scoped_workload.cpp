#include "scoped_workload.h"

#include <utility>

namespace tipbench::suites {

namespace {

class ScopedWorkload final : public Workload {
 public:
  ScopedWorkload(std::unique_ptr<Workload> inner, ApplySetting apply, std::function<void()> restore,
                 nlohmann::json extra_info, Keep keep = Keep::as_inner)
      : inner_(std::move(inner)),
        apply_(std::move(apply)),
        restore_(std::move(restore)),
        extra_info_(std::move(extra_info)),
        keep_(keep) {}
  ~ScopedWorkload() override {
    inner_.reset();  // the workload ends under the setting it ran with
    if (restore_) restore_();
  }
  ScopedWorkload(const ScopedWorkload&) = delete;
  ScopedWorkload& operator=(const ScopedWorkload&) = delete;

  void step() override { inner_->step(); }
  std::int64_t samples_per_step() const override { return inner_->samples_per_step(); }
  void begin_measurement() override { inner_->begin_measurement(); }
  int fixed_warmup_steps() const override { return inner_->fixed_warmup_steps(); }
  int timed_step_period() const override { return inner_->timed_step_period(); }
  nlohmann::json info() const override {
    nlohmann::json j = inner_->info();
    j.update(extra_info_);
    return j;
  }
  std::map<std::string, double> metrics() const override { return inner_->metrics(); }
  std::optional<std::string> invalid_reason() const override { return inner_->invalid_reason(); }
  // A knob set by the caller cannot be set again, so such a workload is never kept.
  bool keep_between_trials() const override {
    return keep_ == Keep::as_inner && (apply_ || !restore_) && inner_->keep_between_trials();
  }
  void set_aside() override {
    inner_->set_aside();
    if (apply_ && restore_) std::exchange(restore_, nullptr)();
  }
  void take_back() override {
    if (apply_ && !restore_) restore_ = apply_();
    inner_->take_back();
  }
  bool memory_in_private_pool() const override { return inner_->memory_in_private_pool(); }
  bool steps_run_elsewhere() const override { return inner_->steps_run_elsewhere(); }
  StepsTimedElsewhere time_steps_elsewhere(int steps) override { return inner_->time_steps_elsewhere(steps); }

 private:
  std::unique_ptr<Workload> inner_;
  ApplySetting apply_;             // null: the knob was set by the caller (with_restore) or none
  std::function<void()> restore_;  // null while set aside, or with nothing to restore
  nlohmann::json extra_info_;
  Keep keep_;
};

}  // namespace

std::unique_ptr<Workload> with_setting(const ApplySetting& apply,
                                       const std::function<std::unique_ptr<Workload>()>& build,
                                       const std::function<nlohmann::json()>& info_under_setting) {
  auto restore = apply();
  try {
    auto inner = build();
    nlohmann::json info = info_under_setting ? info_under_setting() : nlohmann::json::object();
    return std::make_unique<ScopedWorkload>(std::move(inner), apply, std::move(restore), std::move(info));
  } catch (...) {
    if (restore) restore();
    throw;
  }
}

std::unique_ptr<Workload> with_restore(std::unique_ptr<Workload> inner, std::function<void()> restore,
                                       nlohmann::json extra_info) {
  return std::make_unique<ScopedWorkload>(std::move(inner), nullptr, std::move(restore), std::move(extra_info));
}

std::unique_ptr<Workload> with_info(std::unique_ptr<Workload> inner, nlohmann::json extra_info, Keep keep) {
  return std::make_unique<ScopedWorkload>(std::move(inner), nullptr, nullptr, std::move(extra_info), keep);
}

}  // namespace tipbench::suites
