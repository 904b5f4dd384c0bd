#include "checkpoint.h"

#include "common/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <mutex>
#include <optional>

namespace tipbench::suites {

namespace {

namespace ag = torch::autograd;

// The default generators' states: always the CPU's, plus the CUDA generator of `like`'s device.
struct RngState {
  at::Tensor cpu;
  std::optional<c10::Device> cuda_device;
  at::Tensor cuda;

  static RngState capture(const at::Tensor& like) {
    RngState s;
    s.cpu = get(c10::Device(c10::kCPU));
    if (like.is_cuda()) {
      s.cuda_device = like.device();
      s.cuda = get(like.device());
    }
    return s;
  }
  void restore() const {
    set(c10::Device(c10::kCPU), cpu);
    if (cuda_device) set(*cuda_device, cuda);
  }

 private:
  static at::Tensor get(const c10::Device& device) {
    at::Generator gen = at::globalContext().defaultGenerator(device);  // shares the generator
    std::lock_guard<std::mutex> lock(gen.mutex());
    return gen.get_state();
  }
  static void set(const c10::Device& device, const at::Tensor& state) {
    at::Generator gen = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
  }
};

// Runs the recompute in the forward's RNG and autocast state, then puts both back.
class ReplayScope {
 public:
  ReplayScope(const RngState& rng, const AutocastState& autocast, const at::Tensor& like)
      : rng_now_(RngState::capture(like)), autocast_now_(AutocastState::capture()), replayed_(autocast) {
    rng.restore();
    replayed_.apply();
    if (replayed_.any()) at::autocast::increment_nesting();
  }
  ~ReplayScope() {
    // Leaving the outermost autocast region clears its cache of casted weights, as
    // torch.autocast's __exit__ does; stale casts would survive the optimizer step otherwise.
    if (replayed_.any() && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    autocast_now_.apply();
    rng_now_.restore();
  }
  ReplayScope(const ReplayScope&) = delete;
  ReplayScope& operator=(const ReplayScope&) = delete;

 private:
  RngState rng_now_;
  AutocastState autocast_now_;
  AutocastState replayed_;
};

// What backward needs besides the saved input. Kept in a capsule in the context's saved_data
// (freed with the autograd node), since saved_data holds only IValues.
struct Segment : torch::CustomClassHolder {
  SegmentFn fn;
  std::vector<at::Tensor> params;
  bool input_requires_grad = false;
  RngState rng;
  AutocastState autocast;
};

struct Checkpoint : ag::Function<Checkpoint> {
  // Runs with grad mode off (Function::apply turns it off): nothing inside fn is saved.
  static at::Tensor forward(ag::AutogradContext* ctx, const at::Tensor& x, at::TensorList params,
                            const c10::intrusive_ptr<Segment>& segment) {
    segment->rng = RngState::capture(x);
    segment->autocast = AutocastState::capture();
    ctx->save_for_backward({x});
    ctx->saved_data["segment"] = c10::IValue::make_capsule(segment);
    return segment->fn(x);
  }

  // One gradient per forward input: x, each parameter, and none for the segment.
  static ag::variable_list backward(ag::AutogradContext* ctx, ag::variable_list grad_outputs) {
    auto segment = c10::static_intrusive_pointer_cast<Segment>(ctx->saved_data["segment"].toCapsule());
    at::Tensor x = ctx->get_saved_variables()[0].detach();
    x.requires_grad_(segment->input_requires_grad);
    at::Tensor y;
    {
      ReplayScope replay(segment->rng, segment->autocast, x);
      torch::AutoGradMode grad_on(true);
      y = segment->fn(x);
    }
    ag::variable_list targets;
    if (x.requires_grad()) targets.push_back(x);
    for (const auto& p : segment->params) {
      if (p.requires_grad()) targets.push_back(p);
    }
    ag::variable_list grads;
    if (!targets.empty() && y.requires_grad()) {
      grads = ag::grad({y}, targets, {grad_outputs[0]}, /*retain_graph=*/false,
                       /*create_graph=*/false, /*allow_unused=*/true);
    }
    ag::variable_list out;
    std::size_t next = 0;
    auto take = [&](bool wanted) { return wanted && next < grads.size() ? grads[next++] : at::Tensor(); };
    out.push_back(take(x.requires_grad()));
    for (const auto& p : segment->params) out.push_back(take(p.requires_grad()));
    out.emplace_back();  // the segment argument
    return out;
  }
};

}  // namespace

at::Tensor checkpoint(SegmentFn fn, const at::Tensor& x, const std::vector<at::Tensor>& params) {
  if (!at::GradMode::is_enabled()) return fn(x);
  auto segment = c10::make_intrusive<Segment>();
  segment->fn = std::move(fn);
  segment->params = params;
  segment->input_requires_grad = x.requires_grad();
  return Checkpoint::apply(x, at::TensorList(params), segment);
}

}  // namespace tipbench::suites
