#include "distributed/ddp_workload.h"

#include "distributed/rank_memory.h"
#include "distributed/session.h"
#include "distributed/step_phases.h"
#include "distributed/test_fault.h"
#include "tipbench/common/error_text.h"
#include "common/optimizers.h"

#include <fmt/format.h>

#include <algorithm>

namespace tipbench::distributed {

namespace {

class DdpWorkload final : public Workload {
 public:
  DdpWorkload(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm, const DdpSpec& spec)
      : session_(Session::current_or_solo(context.device)),
        spec_(spec),
        device_(session_.device()),
        model_(models::make_model(spec.training.model, spec.training.model_options)),
        phases_(device_) {
    if (session_.leader()) session_.send(Op::prepare, prepare_message(c, arm, spec.trial).dump());
    if (!session_.leader()) reset_peak_memory(device_);  // the harness resets rank 0's
    module_ = model_.ptr();
    module_->to(device_);
    module_->train();
    guarded([&] {
      // DistributedDataParallel(module): rank 0's parameters and buffers, the Reducer.
      ddp_ = std::make_unique<DdpReducer>(*module_, session_.gradient_group(), spec.ddp);
    });
    // Backward's compute ends at the last gradient; what follows until backward returns is the
    // all-reduce that backward did not hide, and the copy out of the buckets.
    ddp_->on_last_gradient([this] { phases_.mark(StepPhases::backward_done); });
    optimizer_ = suites::make_default_sgd(module_->parameters());
    // One global batch, identical on every rank (same seed); each rank trains on its slice.
    const std::int64_t b = spec.training.batch_size;
    const std::int64_t side = models::resolved_image_size(spec.training.model, spec.training.model_options);
    const auto classes = models::resolved_num_classes(spec.training.model, spec.training.model_options);
    const std::int64_t global = b * session_.world_size();
    auto images = torch::randn({global, 3, side, side});
    auto labels = torch::randint(classes, {global}, torch::kLong);
    images_ = images.narrow(0, b * session_.rank(), b).to(device_).contiguous();
    labels_ = labels.narrow(0, b * session_.rank(), b).to(device_);
  }

  ~DdpWorkload() override {
    if (session_.leader()) session_.send(Op::release);
  }

  void step() override {
    if (session_.leader()) {
      count_step_for_test_fault(session_.rank());  // followers count theirs as the command arrives
      session_.send(Op::step);
    }
    phases_.mark(StepPhases::start);
    optimizer_->zero_grad(true);
    guarded([&] { ddp_->before_forward(); });  // buffers broadcast from rank 0
    auto out = model_.forward(images_);
    ddp_->after_forward();
    auto loss = torch::nn::functional::cross_entropy(out, labels_);
    // Returns once the reducer's final callback has waited for every bucket's all-reduce and
    // written the averaged gradients into .grad().
    guarded([&] { loss.backward(); });
    phases_.mark(StepPhases::gradients_ready);
    optimizer_->step();
    phases_.mark(StepPhases::end);
    phases_.next_step();
    session_.note_progress();
  }

  std::int64_t samples_per_step() const override { return spec_.training.batch_size * session_.world_size(); }

  void begin_measurement() override {
    if (session_.leader()) session_.send(Op::begin_measurement);
    // peak_memory_mb is the timed steps' peak on every rank: the harness resets rank 0's CUDA
    // peaks between the warm-up and the timed steps (memory_probe.h, begin_timed), each follower
    // resets its own here, at the same point (c10 Stat::reset_peak: peak = current).
    if (!session_.leader()) reset_peak_memory(device_);
    phases_.clear();
  }

  nlohmann::json info() const override {
    constexpr double kMiB = 1024.0 * 1024.0;
    nlohmann::json out = {{"model", spec_.training.model},
                          {"batch_per_rank", spec_.training.batch_size},
                          {"world_size", session_.world_size()},
                          {"backend", session_.backend_name()},
                          {"launcher", session_.env().launcher},
                          {"nodes", session_.layout().at("nodes")},
                          {"ranks_per_node", session_.layout().at("ranks_per_node")},
                          {"hosts", session_.layout().at("hosts")},
                          {"transport", session_.transport()},
                          {"ddp", "c10d::Reducer"},
                          {"optimizer_impl", suites::optimizer_impl_name(suites::pytorch_default_impl(device_.type()))},
                          {"overlap", spec_.ddp.overlap},
                          {"broadcast_buffers", spec_.ddp.broadcast_buffers},
                          {"buckets", ddp_->buckets().size()},
                          {"gradient_mb", static_cast<double>(ddp_->gradient_bytes()) / kMiB},
                          {"intra_op_threads_per_rank", torch::get_num_threads()}};
    if (spec_.ddp.overlap) {  // without overlap the one bucket has no limit
      const auto limits = ddp_->bucket_size_limits();
      out["first_bucket_mb"] = static_cast<double>(limits.at(0)) / kMiB;
      out["bucket_mb"] = static_cast<double>(limits.at(1)) / kMiB;
    }
    return out;
  }

  // This rank's figures, and on rank 0 every rank's: rank<r>_step_ms, rank<r>_comm_share,
  // rank<r>_peak_memory_mb, plus the group's worst comm share and memory.
  std::map<std::string, double> metrics() const override {
    auto own = local_metrics();
    if (!session_.leader()) return own;
    session_.send(Op::metrics);
    auto all = session_.collect_metrics();
    all[0] = own;
    std::map<std::string, double> out{{"comm_exposed_ms", own.at("comm_exposed_ms")},
                                      {"comm_share", own.at("comm_share")}};
    double worst_share = 0, worst_memory = 0;
    for (int r = 0; r < static_cast<int>(all.size()); ++r) {
      for (const auto& [key, value] : all[r]) out[fmt::format("rank{}_{}", r, key)] = value;
      worst_share = std::max(worst_share, all[r].count("comm_share") ? all[r].at("comm_share") : 0.0);
      worst_memory = std::max(worst_memory, all[r].count("peak_memory_mb") ? all[r].at("peak_memory_mb") : 0.0);
    }
    out["comm_share_max"] = worst_share;
    out["peak_memory_mb_max"] = worst_memory;
    return out;
  }

 private:
  std::map<std::string, double> local_metrics() const {
    const auto t = phases_.totals_ms();  // per-phase totals over the timed steps
    const double steps = std::max<double>(1, t.steps);
    return {{"step_ms", t.step_ms / steps},
            {"comm_exposed_ms", t.comm_ms / steps},
            {"comm_share", t.step_ms > 0 ? t.comm_ms / t.step_ms : 0},
            {"peak_memory_mb", peak_memory_mb(device_)}};
  }

  // A failed collective ends the whole run (the group cannot go on without the rank), naming it.
  // Alone (world size 1) there is no group to lose: the error fails the arm like any other.
  template <typename F>
  void guarded(F&& f) {
    if (session_.world_size() == 1) {
      f();
      return;
    }
    try {
      f();
    } catch (const std::exception& e) {
      session_.peer_failed(error_summary(e));
    }
  }

  Session& session_;
  DdpSpec spec_;
  c10::Device device_;
  torch::nn::AnyModule model_;
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<DdpReducer> ddp_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // make_default_sgd: Python's default step
  torch::Tensor images_, labels_;
  StepPhases phases_;
};

}  // namespace

nlohmann::json prepare_message(const CaseSpec& c, const ArmSpec& arm, const TrialInfo& trial) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& [k, v] : c.params) params.push_back({k, v});
  return {{"params", params}, {"arm", arm.name}, {"block", trial.block}, {"position", trial.position}};
}

std::unique_ptr<Workload> make_ddp_workload(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                            const DdpSpec& spec) {
  return std::make_unique<DdpWorkload>(context, c, arm, spec);
}

}  // namespace tipbench::distributed
