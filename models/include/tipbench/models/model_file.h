// A user's own model: a TorchScript file (.pt) or a torch.export archive (.pt2, a train and an
// eval program run op by op through the dispatcher) that scripts/export_model.py wrote
// (docs/own-model.md), loaded and checked once per process, then registered as one more model under its name, so every
// suite that builds a model with make_model(name) trains it. Example:
//   const ModelFile& file = models::use_model_file({.path = "net.pt"});   // ModelFileError if bad
//   auto model = models::make_model(file.name);    // a fresh copy of the file's weights
//   model.forward(torch::randn({8, 3, 224, 224}));  // logits [8, file.classes]
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::models {

// A file that cannot be used, in one line for the user (the CLI's exit 2).
struct ModelFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ModelFileRequest {
  std::string path;
  bool allow_trace = false;  // accept a file export_model.py made with --allow-trace
  // Ops beyond the .pt2 allow-list (ATen's compute ops) this file may call: "NS::NAME" or "NS::*"
  // (--allow-op). TorchScript files are code and are not checked (docs/security.md).
  std::vector<std::string> allow_ops;
  // One sample's shape [C, H, W] and the class count, for a file without tipbench's metadata (a
  // plain torch.jit.save); they must agree with the metadata when it has them. Empty / 0: none.
  std::vector<std::int64_t> input;
  std::int64_t classes = 0;
};

struct ModelFile {
  std::string path;                 // as requested
  std::string sha256;               // of the file's bytes: the model's identity in results and baselines
  std::string name;                 // the model's name in cases ("model:NAME"), never a built-in model's
  std::vector<std::int64_t> input;  // [C, H, W]
  std::int64_t classes = 0;
  std::string format;           // "torchscript" (a .pt) or "pt2" (torch.export's archive)
  std::string how;              // "script", "trace" or "export" (the metadata's), "unknown" without metadata
  std::string warning;          // the metadata's warning (a traced file's), "" if none
  std::int64_t parameters = 0;  // trainable parameter elements, as loaded here
  std::string metadata;         // the file's tipbench.json as written, "" when it has none
  // A .pt2's runner and programs (schema_version, exported_with_torch, train_ops, eval_ops); empty
  // for TorchScript, whose executor settings are script_executor_settings().
  std::map<std::string, std::string> program;
};

// Loads and checks the file, then registers it (a second call with the same path and bytes
// returns the first registration). The checks: a TorchScript archive this LibTorch reads (not
// newer than it, no op it lacks) or a .pt2 of torch.export's schema 8 with a train and an eval
// program of ATen ops this process has, the metadata's format, a traced file only with allow_trace, an
// input of 3 channels and a square image (the workloads feed [N, 3, S, S]), a name that is no
// built-in model's, and a forward of 2 zero images in eval mode giving floating logits [2, K]
// (or a tuple whose first element is them). Throws ModelFileError naming the file and the reason.
const ModelFile& use_model_file(const ModelFileRequest& request);

// The same checks, registering nothing (the gate compares two versions of a model before it runs
// them). Throws ModelFileError.
ModelFile inspect_model_file(const ModelFileRequest& request);

// The registered file of a model name; nullptr for a built-in model or an unknown name.
const ModelFile* model_file(const std::string& name);

// The TorchScript executor's settings in this process, recorded with every result of a model
// file (they change what a scripted model's step runs: profiling, re-specialisation, fusion).
std::map<std::string, std::string> script_executor_settings();

// --jit-optimize off: the graph executor runs a scripted model's graph as written (no
// profiling-driven specialisation, no autodiff subgraphs, no fusion). Process-wide.
void set_script_optimization(bool on);

}  // namespace tipbench::models
