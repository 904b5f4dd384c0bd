// What a tip changes in the training step, kept in the tip's own suite file: the training
// workload (training.h) runs PyTorch's default step and asks the spec's policies at a few hooks,
// so it knows no tip. A hook left alone does what the default step does. A replace-hook (inputs,
// zero_grad, micro_batches, run_step) takes over one part of the step: a policy (derived from
// Policy<itself>) replaces the hooks it overrides, found at compile time, and two policies of one
// step replacing the same hook are std::invalid_argument.
// The smallest training-step tip (a suite file, plus its line in suites/CMakeLists.txt):
//   class FillWithZeros final : public Policy<FillWithZeros> {
//    public:
//     std::string name() const override { return "zero_grad(set_to_none=false)"; }
//     void zero_grad(StepState& s) override { s.optimizer().zero_grad(/*set_to_none=*/false); }
//   };
//   class ZeroGrad final : public Suite {  // name(), description(), cases() with arms none/zero
//     std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c,
//                                       const ArmSpec& arm, const TrialInfo&) const override {
//       TrainingSpec spec = training_spec(c);
//       if (arm.name == "zero") spec.policies.push_back(std::make_shared<FillWithZeros>());
//       return make_training_workload(context, spec);
//     }
//   };
//   TIPBENCH_REGISTER_SUITE(ZeroGrad);
#pragma once

#include "training.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tipbench::suites {

// One step's input batch and its labels, on the device.
struct StepInputs {
  at::Tensor images;
  at::Tensor labels;
};

// What a policy may use: the training workload's model, optimizer and staged tensors. Valid from
// prepare() on, for the workload's lifetime.
class StepState {
 public:
  virtual ~StepState() = default;
  virtual const TrainingSpec& spec() const = 0;
  virtual const c10::Device& device() const = 0;
  virtual torch::nn::AnyModule& model() = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  virtual std::int64_t image_size() const = 0;  // the model's (height = width)
  virtual std::int64_t classes() const = 0;
  virtual std::int64_t micro_batches() const = 0;  // of the step, 1 unless a policy splits it
  virtual const at::Tensor& images() const = 0;    // staged, (batch, 3, side, side): side = largest_side
  virtual const at::Tensor& labels() const = 0;    // staged, (batch)
  // A contiguous (batch, 3, h, w) input cut from the staged images (a copy, in the model's memory
  // format: the same cost in every arm of a case).
  virtual at::Tensor input_of(std::int64_t h, std::int64_t w) const = 0;
  // The input of PyTorch's default step: input_of(image_size, image_size) made once, and the
  // staged labels.
  virtual StepInputs fixed_inputs() = 0;
  // The eager step on `in` (zero_grad, forward and backward per micro-batch, optimizer step;
  // autocast and loss scaling per the spec's precision), through the other policies' hooks.
  // Returns its loss, detached. What a CUDA graph captures.
  virtual at::Tensor eager_step(const StepInputs& in) = 0;
  // Why this step cannot be captured as a CUDA graph (a policy's per-step host work or changing
  // shapes, the fp16 loss scaler, an optimizer's host-side step count); nullopt when it can.
  virtual std::optional<std::string> capture_unsafe_reason() const = 0;
};

// The hooks of the step. A policy derives from Policy<itself> (below), never from this directly.
class StepPolicy {
 public:
  // The replace-hooks a policy takes over; the step calls only those.
  struct Replaces {
    bool inputs = false;
    bool zero_grad = false;
    bool micro_batches = false;
    bool run_step = false;
  };

  virtual ~StepPolicy() = default;
  virtual std::string name() const = 0;   // names the policy in errors
  virtual Replaces replaces() const = 0;  // the ones it overrides (Policy<Self>)

  // Largest input side a step will use: the images are staged at it (default: the model's).
  virtual std::int64_t largest_side(std::int64_t image_size) const { return image_size; }
  // Once, after the model, optimizer and staged tensors exist, in the order of spec.policies.
  virtual void prepare(StepState&) {}

  // Replace-hooks: called only in a policy that overrides them.
  // The batch of a step; `timing` once begin_measurement() has run (default: fixed_inputs()).
  virtual StepInputs inputs(StepState&, bool /*timing*/) { not_replaced("inputs"); }
  // Default: optimizer.zero_grad(set_to_none=true), LibTorch's and PyTorch's default.
  virtual void zero_grad(StepState&) { not_replaced("zero_grad"); }
  // The batch split into this many equal micro-batches, a forward and backward each (loss
  // divided by their number), then one optimizer step. Default: 1.
  virtual std::int64_t micro_batches() const { not_replaced("micro_batches"); }
  // The whole step; returns its loss (undefined when it has none, e.g. a graph replay).
  // Default: eager_step(inputs).
  virtual at::Tensor run_step(StepState&) { not_replaced("run_step"); }

  // The loss passed to after_step is the sum of the micro-batches' losses only when a policy
  // keeps it (no other arm times the extra additions); else the last micro-batch's.
  virtual bool keeps_loss() const { return false; }
  virtual void after_step(StepState&, const at::Tensor& /*loss*/) {}

  virtual void begin_measurement(StepState&) {}
  // The period of the policy's timed input schedule (Workload::timed_step_period); 1: none.
  virtual int timed_step_period() const { return 1; }
  // The warm-up steps the policy's inputs need when its step is no steady state
  // (Workload::fixed_warmup_steps); 0: the harness's warm-up until step times settle.
  virtual int fixed_warmup_steps() const { return 0; }
  // Contributions to the workload's metrics and info (a policy may restate a default info key,
  // e.g. input_shapes).
  virtual std::map<std::string, double> metrics(const StepState&) const { return {}; }
  virtual nlohmann::json info(const StepState&) const { return nlohmann::json::object(); }
  // Whether the workload may be kept for the arm's next trial (Workload::keep_between_trials):
  // false for a policy whose timed steps must start from its prepared state (a warm-up input
  // that the timed schedule replaces).
  virtual bool keeps_between_trials() const { return true; }
  // What a CUDA graph capture could not hold of this policy, completing "a training step captured
  // as a CUDA graph cannot ...".
  virtual std::optional<std::string> capture_unsafe_reason() const { return std::nullopt; }
  // Whether the policy's steps replay a CUDA graph, whose memory is a private pool
  // (Workload::memory_in_private_pool).
  virtual bool replays_a_graph() const { return false; }

 private:
  template <class Self>
  friend class Policy;
  StepPolicy() = default;  // a policy is a Policy<Self>, so that replaces() is found, not declared

  [[noreturn]] void not_replaced(const char* hook) const {
    throw std::logic_error("step policy '" + name() + "': its " + hook +
                           " hook was called although it does not "
                           "override it");
  }
};

// What every policy derives from: `class MyPolicy final : public Policy<MyPolicy>`. The
// replace-hooks it overrides are those it replaces: an override's member pointer has Self's type,
// an inherited one StepPolicy's. So a hook cannot be overridden and then never called for want of
// a declaration, nor declared and left out.
template <class Self>
class Policy : public StepPolicy {
 public:
  Replaces replaces() const final {
    return {.inputs = !std::is_same_v<decltype(&Self::inputs), decltype(&StepPolicy::inputs)>,
            .zero_grad = !std::is_same_v<decltype(&Self::zero_grad), decltype(&StepPolicy::zero_grad)>,
            .micro_batches = !std::is_same_v<decltype(&Self::micro_batches), decltype(&StepPolicy::micro_batches)>,
            .run_step = !std::is_same_v<decltype(&Self::run_step), decltype(&StepPolicy::run_step)>};
  }
};

}  // namespace tipbench::suites
