// TorchScript behind one door (for the suites; the models library's loader of a user's model file,
// models/src/model_file.cpp, is the other). TorchScript is deprecated since torch 2.11 and may
// leave a later LibTorch; this is the only suite file that includes its headers, so the rest asks here
// whether it can be used and whether its tensor-expression fuser (NNC) fused a graph. Example:
//   if (auto why = torchscript_unavailable_reason()) skip(*why);
//   ScriptFunction gelu("def f(x):\n    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))\n", "f");
//   FusionReport r = gelu.warm_up({x});   // r.status() == "fused" on a GPU, "not_fused" on CPU here
//   torch::Tensor y = gelu({x});
#pragma once

#include <ATen/core/ivalue.h>
#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::suites {

// What the fuser made of the last optimized graph: fusion groups (prim::TensorExprGroup, and the
// older prim::FusionGroup / prim::CudaFusionGroup) found anywhere in it, including inside the
// differentiable subgraphs that training graphs are split into.
struct FusionReport {
  int fusion_groups = 0;
  int fused_ops = 0;  // operations inside the groups' subgraphs (constants not counted)
  std::string graph;  // the optimized graph as TorchScript prints it
  bool fused() const { return fusion_groups > 0; }
  std::string status() const { return fused() ? "fused" : "not_fused"; }
};

// nullopt when this LibTorch has the TorchScript headers and compiles and runs a script here;
// otherwise why not (checked once, then cached).
std::optional<std::string> torchscript_unavailable_reason();

// Why NNC does or does not fuse on this build's CPU, found by trying it: TorchScript leaves CPU
// fusion off by default; with it forced on, a build without LLVM raises "LLVM Backend not
// found". One line for an arm's info (checked once, then cached).
std::string cpu_fusion_diagnosis();

// Why a training step (inputs that require grad) ran unfused on a GPU, found by trying: the
// profiling executor runs no fuser in the forward of a DifferentiableGraph (torch 2.11's
// torch/csrc/jit/runtime/profiling_graph_executor_impl.cpp, runProfilingOptimizations: after
// differentiate() the forward only loses its type specialisations and profile nodes; older
// releases ran runDiffGraphPasses on it, which fused). A probe without grad on `device` shows
// whether NNC fuses there at all. Seen on an H100, torch 2.11.0+cu130 (2026-11-26): the
// no-grad probe fused, the same expression with grad did not. One line (cached per device).
std::string gpu_fusion_diagnosis(const c10::Device& device);

// One function compiled from TorchScript source with torch::jit::compile, run by the profiling
// graph executor with the fuser in its default state.
class ScriptFunction {
 public:
  // Throws std::runtime_error when TorchScript is unavailable or the source does not compile.
  ScriptFunction(const std::string& source, const std::string& name);
  ~ScriptFunction();
  ScriptFunction(ScriptFunction&&) noexcept;
  ScriptFunction& operator=(ScriptFunction&&) noexcept;

  at::Tensor operator()(std::vector<c10::IValue> args) const;

  // Runs the function as often as the profiling executor needs to specialize and optimize it for
  // these inputs (profiled runs + 2), so timing never includes profiling runs, then inspects the
  // graph it executed last. Inputs that require grad give the training graph.
  FusionReport warm_up(const std::vector<c10::IValue>& args) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tipbench::suites
