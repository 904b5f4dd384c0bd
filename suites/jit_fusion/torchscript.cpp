#include "torchscript.h"

#include <torch/torch.h>

// The only includes of TorchScript headers in the project: a LibTorch without them still builds,
// and every TorchScript arm is then skipped with the reason below.
#if __has_include(<torch/jit.h>) && __has_include(<torch/csrc/jit/runtime/graph_executor.h>) && \
    __has_include(<torch/csrc/jit/codegen/fuser/interface.h>)
#define TIPBENCH_HAVE_TORCHSCRIPT 1
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/jit.h>
#else
#define TIPBENCH_HAVE_TORCHSCRIPT 0
#endif

#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace tipbench::suites {

namespace {

// The first line of an exception message: LibTorch appends a C++ backtrace to its errors.
std::string first_line(const std::string& message) { return message.substr(0, message.find('\n')); }

const char* kProbeSource = "def f(x):\n    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))\n";

#if TIPBENCH_HAVE_TORCHSCRIPT
namespace jit = torch::jit;

bool is_fusion_group(const jit::Node* node) {
  const auto kind = node->kind();
  return kind == c10::prim::TensorExprGroup || kind == c10::prim::FusionGroup || kind == c10::prim::CudaFusionGroup;
}

// Walks nested blocks (if/loop bodies) and subgraphs (prim::DifferentiableGraph in training).
void count_fusion(const jit::Block* block, FusionReport& report) {
  for (const jit::Node* node : block->nodes()) {
    const bool has_subgraph =
        node->hasAttribute(c10::attr::Subgraph) && node->kindOf(c10::attr::Subgraph) == jit::AttributeKind::g;
    if (is_fusion_group(node)) {
      ++report.fusion_groups;
      if (has_subgraph) {
        for (const jit::Node* inner : node->g(c10::attr::Subgraph)->nodes()) {
          if (inner->kind() != c10::prim::Constant) ++report.fused_ops;
        }
      }
    } else if (has_subgraph) {
      count_fusion(node->g(c10::attr::Subgraph)->block(), report);
    }
    for (const jit::Block* inner : node->blocks()) count_fusion(inner, report);
  }
}
#endif

}  // namespace

#if TIPBENCH_HAVE_TORCHSCRIPT
struct ScriptFunction::Impl {
  std::shared_ptr<jit::CompilationUnit> unit;
  jit::Function* function = nullptr;
};
#else
struct ScriptFunction::Impl {};
#endif

std::optional<std::string> torchscript_unavailable_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
#if TIPBENCH_HAVE_TORCHSCRIPT
    try {
      ScriptFunction probe("def f(x):\n    return x + 1.0\n", "f");
      probe({torch::zeros({2})});
      return std::nullopt;
    } catch (const std::exception& e) {
      return "TorchScript (deprecated since torch 2.11) does not work in this LibTorch: " + first_line(e.what());
    }
#else
    return std::string(
        "this LibTorch has no TorchScript headers (torch/jit.h); TorchScript is "
        "deprecated since torch 2.11");
#endif
  }();
  return reason;
}

#if TIPBENCH_HAVE_TORCHSCRIPT
namespace {

// The fusion probe run once on `device`, as a phrase: "NNC fused the probe (N ops)", "the probe
// ran unfused", or "the probe raised: <its first line>".
std::string probe_fusion(const c10::Device& device) {
  try {
    ScriptFunction probe(kProbeSource, "f");
    const FusionReport r = probe.warm_up({torch::randn({64, 64}, torch::TensorOptions().device(device))});
    return r.fused() ? "NNC fused the probe (" + std::to_string(r.fused_ops) + " ops)" : "the probe ran unfused";
  } catch (const std::exception& e) {
    return "the probe raised: " + first_line(e.what());
  }
}

}  // namespace
#endif

std::string gpu_fusion_diagnosis(const c10::Device& device) {
#if TIPBENCH_HAVE_TORCHSCRIPT
  static std::mutex mutex;
  static std::map<std::string, std::string> by_device;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = by_device.try_emplace(device.str());
  if (!inserted) return it->second;
  if (auto why = torchscript_unavailable_reason()) return it->second = *why;
  return it->second =
             "TorchScript's profiling executor runs no fuser inside a differentiable graph, so a step "
             "whose inputs require grad runs unfused; without grad on " +
             device.str() + ", " + probe_fusion(device);
#else
  (void)device;
  return *torchscript_unavailable_reason();
#endif
}

std::string cpu_fusion_diagnosis() {
  static const std::string diagnosis = []() -> std::string {
#if TIPBENCH_HAVE_TORCHSCRIPT
    if (torchscript_unavailable_reason()) return *torchscript_unavailable_reason();
    const bool default_on = jit::canFuseOnCPU();
    std::string head = default_on ? "TorchScript fuses on CPU by default here"
                                  : "TorchScript leaves CPU fusion off by default (canFuseOnCPU() is false)";
    if (default_on) return head;
    jit::overrideCanFuseOnCPU(true);
    const std::string tail = "; forced on, " + probe_fusion(torch::Device(torch::kCPU));
    jit::overrideCanFuseOnCPU(false);
    return head + tail;
#else
    return *torchscript_unavailable_reason();
#endif
  }();
  return diagnosis;
}

ScriptFunction::ScriptFunction(const std::string& source, const std::string& name) : impl_(std::make_unique<Impl>()) {
#if TIPBENCH_HAVE_TORCHSCRIPT
  impl_->unit = jit::compile(source);
  impl_->function = &impl_->unit->get_function(name);
#else
  throw std::runtime_error(*torchscript_unavailable_reason());
#endif
}

ScriptFunction::~ScriptFunction() = default;
ScriptFunction::ScriptFunction(ScriptFunction&&) noexcept = default;
ScriptFunction& ScriptFunction::operator=(ScriptFunction&&) noexcept = default;

at::Tensor ScriptFunction::operator()(std::vector<c10::IValue> args) const {
#if TIPBENCH_HAVE_TORCHSCRIPT
  return (*impl_->function)(std::move(args)).toTensor();
#else
  throw std::runtime_error(*torchscript_unavailable_reason());
#endif
}

FusionReport ScriptFunction::warm_up(const std::vector<c10::IValue>& args) const {
  FusionReport report;
#if TIPBENCH_HAVE_TORCHSCRIPT
  std::vector<at::Tensor> differentiable;
  for (const auto& a : args) {
    if (a.isTensor() && a.toTensor().requires_grad()) differentiable.push_back(a.toTensor());
  }
  // Profiled runs, then the run that optimizes; backward too when the inputs need gradients
  // (autograd::grad: nothing accumulates into .grad).
  const std::size_t runs = jit::getNumProfiledRuns() + 2;
  for (std::size_t i = 0; i < runs; ++i) {
    at::Tensor out = (*this)(args);
    if (!differentiable.empty() && out.requires_grad()) {
      torch::autograd::grad({out.sum()}, differentiable, /*grad_outputs=*/{}, /*retain_graph=*/false,
                            /*create_graph=*/false, /*allow_unused=*/true);
    }
  }
  (*this)(args);  // the last executed graph is this forward's (the executor keeps it per thread)
  if (auto graph = jit::lastExecutedOptimizedGraph()) {
    count_fusion(graph->block(), report);
    std::ostringstream text;
    text << *graph;
    report.graph = text.str();
  }
#endif
  return report;
}

}  // namespace tipbench::suites
