#include "scoped_workload.h"

#include <utility>

namespace tipbench::suites {

namespace {

class ScopedWorkload final : public Workload {
 public:
  ScopedWorkload(std::unique_ptr<Workload> inner, std::function<void()> restore, nlohmann::json extra_info)
      : inner_(std::move(inner)), restore_(std::move(restore)), extra_info_(std::move(extra_info)) {}
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

 private:
  std::unique_ptr<Workload> inner_;
  std::function<void()> restore_;
  nlohmann::json extra_info_;
};

}  // namespace

std::unique_ptr<Workload> with_restore(std::unique_ptr<Workload> inner, std::function<void()> restore,
                                       nlohmann::json extra_info) {
  return std::make_unique<ScopedWorkload>(std::move(inner), std::move(restore), std::move(extra_info));
}

std::unique_ptr<Workload> with_info(std::unique_ptr<Workload> inner, nlohmann::json extra_info) {
  return with_restore(std::move(inner), nullptr, std::move(extra_info));
}

}  // namespace tipbench::suites
