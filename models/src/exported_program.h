// Internal to the models library: a torch.export archive (.pt2) trained from C++. The training IR
// of torch.export.export is a graph of ATen ops; each is called through c10::Dispatcher with
// autograd on, as torch/fx/interpreter.py's Interpreter.run_node calls a node's OpOverload, so the
// kernels and autograd formulas are eager PyTorch's own (gradients equal eager's: docs/own-model.md
// section 4). The archive is read as torch/export/pt2_archive/_package.py's package_pt2 writes it
// and the graph as torch/_export/serde/serialize.py's GraphModuleDeserializer reads it (schema 8).
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::models {

// Why an archive cannot be trained here, in one line (model_file.cpp adds the path).
struct ExportedProgramError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A tensor the programs take from the module rather than from the user.
struct ExportedTensor {
  enum class Kind { parameter, buffer, constant };
  std::string name;  // the module's dotted name; "PROGRAM.NAME" for a lifted constant
  Kind kind = Kind::parameter;
  torch::Tensor value;  // as stored, on the CPU; a parameter keeps its requires_grad
};

// One graph made ready for the dispatcher: ops resolved once, arguments decoded once, values
// numbered, each value released after its last use (as the fx Interpreter frees them).
class ExportedProgram {
 public:
  // `model` is the archive's models/NAME.json; `state` the module's tensors, which the graph's
  // parameter, buffer and constant inputs are looked up in by name. Every op a node calls must be
  // on allowed_ops.h's list or named in `allowed_ops` (--allow-op), checked before anything runs.
  ExportedProgram(const std::string& name, const nlohmann::json& model, const std::vector<ExportedTensor>& state,
                  const std::vector<std::string>& allowed_ops);
  ~ExportedProgram();
  ExportedProgram(ExportedProgram&&) noexcept;

  // The first user output, given the module's tensors (in the order of `state`) and the images.
  // Throws ExportedProgramError for images outside the sizes the program takes (input_dims).
  torch::Tensor run(const std::vector<torch::Tensor>& state, const torch::Tensor& images) const;

  std::size_t ops() const;
  // The images' sizes the program was exported for: a number (min == max), or the range of a
  // symbolic size (the batch; height and width where the model allows them to vary).
  struct Dim {
    std::int64_t min = 1;
    std::int64_t max = std::numeric_limits<std::int64_t>::max();
  };
  const std::vector<Dim>& input_dims() const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

// A .pt2 written by scripts/export_model.py --format pt2: a "train" and an "eval" program of one
// module (the export bakes the training flag in, so each mode needs its own graph) and its tensors.
struct ExportedArchive {
  std::vector<ExportedTensor> state;  // the train program's parameters and buffers, then constants
  std::unique_ptr<ExportedProgram> train;
  std::unique_ptr<ExportedProgram> eval;
  std::string metadata;        // extra/tipbench.json as written, "" when absent
  std::string schema_version;  // of the serialized graphs, "8.17"
  std::string torch_version;   // that exported them
};

// Whether the bytes are a .pt2 archive (a zip whose archive_format record says "pt2").
bool is_exported_archive(const std::string& bytes);

// Reads the archive and prepares both programs. Throws ExportedProgramError: not a .pt2, another
// serialization schema, no train or eval program, an op off the allow-list (allowed_ops.h; the
// user's `allowed_ops` beside it) or one this process lacks, an argument or node kind this runner
// does not take, a stored tensor whose sizes, strides or offset leave its record.
std::shared_ptr<const ExportedArchive> read_exported_archive(const std::string& bytes,
                                                             const std::vector<std::string>& allowed_ops = {});

}  // namespace tipbench::models
