#include "tipbench/models/model_file.h"

#include "exported_model.h"
#include "model_registry.h"
#include "scripted_model.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/sha256.h"

#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>

namespace tipbench::models {

namespace {

constexpr const char* kMetadataFile = "tipbench.json";  // scripts/export_model.py's METADATA_FILE
constexpr const char* kFormat = "tipbench model file 1";

// A fresh module of the file's model (a fresh copy of its weights) per call.
using ModelMaker = std::function<torch::nn::AnyModule()>;

struct Registered {
  ModelFile file;
  ModelMaker make;
};

std::vector<Registered>& registered() {
  static std::vector<Registered> files;
  return files;
}

std::mutex& registration_mutex() {
  static std::mutex m;
  return m;
}

std::string sha256_of(const std::string& bytes) {
  return sha256_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

std::string shape_text(const std::vector<std::int64_t>& shape) { return fmt::format("{}", fmt::join(shape, ",")); }

std::shared_ptr<const std::string> read_bytes(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw ModelFileError(path + ": a folder, not a model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelFileError(path + ": cannot be read");
  return std::make_shared<const std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The metadata's fields, or the request's where the file has none; both must agree.
void read_metadata(const std::string& text, const ModelFileRequest& request, ModelFile& f) {
  const auto fail = [&](const std::string& why) { throw ModelFileError(f.path + ": " + why); };
  f.input = request.input;
  f.classes = request.classes;
  f.how = "unknown";
  f.name = std::filesystem::path(f.path).stem().string();
  if (text.empty()) {
    if (f.input.empty() || f.classes == 0) {
      fail("has no tipbench metadata (" + std::string(kMetadataFile) +
           "): export it with scripts/export_model.py, or give --model-input C,H,W and --model-classes K");
    }
    return;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    if (j.value("format", "") != kFormat) fail("its metadata is not '" + std::string(kFormat) + "'");
    const auto input = j.at("input").get<std::vector<std::int64_t>>();
    const auto classes = j.at("classes").get<std::int64_t>();
    if (!f.input.empty() && f.input != input) {
      fail("--model-input " + shape_text(f.input) + " disagrees with the file's input " + shape_text(input));
    }
    if (f.classes != 0 && f.classes != classes) {
      fail("--model-classes " + std::to_string(f.classes) + " disagrees with the file's " + std::to_string(classes));
    }
    f.input = input;
    f.classes = classes;
    f.name = j.at("name").get<std::string>();
    f.how = j.at("how").get<std::string>();
    f.warning = j.value("warning", "");
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("its metadata is damaged: ") + e.what());
  }
  f.metadata = text;
}

void check_request(const ModelFileRequest& request, ModelFile& f) {
  const auto fail = [&](const std::string& why) { throw ModelFileError(f.path + ": " + why); };
  if (f.how == "trace" && !request.allow_trace) {
    fail("was " + (f.warning.empty() ? std::string("traced, not scripted") : f.warning) +
         "; measure it anyway with --allow-trace");
  }
  if (f.input.size() != 3 || f.input[0] != 3 || f.input[1] != f.input[2] || f.input[1] < 1) {
    fail("wants input " + shape_text(f.input) + "; tipbench's workloads feed square 3-channel images (3,S,S)");
  }
  if (f.classes < 1) fail("has " + std::to_string(f.classes) + " classes; want at least 1");
  if (f.name.empty() || f.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                            std::string::npos) {
    fail("its name '" + f.name + "' is not made of letters, digits, '_', '.' and '-' (export_model.py --name)");
  }
  for (const auto& info : available_models()) {
    if (info.name == f.name) {
      fail("its name '" + f.name + "' is taken by " +
           (info.family == "file" ? "another model file" : "a built-in model") + "; export it with another --name");
    }
  }
}

// A forward of two zero images in eval mode: the contract's logits [2, K], floating point.
void check_forward(const ModelMaker& make, ModelFile& f) {
  torch::nn::AnyModule model = make();
  model.ptr()->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor logits;
  try {
    logits = model.forward(torch::zeros({2, f.input[0], f.input[1], f.input[2]}));
  } catch (const std::exception& e) {
    throw ModelFileError(f.path + ": its forward fails on [2," + shape_text(f.input) + "]: " + error_summary(e));
  }
  if (logits.dim() != 2 || logits.size(0) != 2 || logits.size(1) != f.classes) {
    throw ModelFileError(f.path + ": its forward returns " + shape_text(logits.sizes().vec()) + "; want logits [2," +
                         std::to_string(f.classes) + "]");
  }
  if (!logits.is_floating_point()) {
    throw ModelFileError(f.path + ": its logits are " + std::string(c10::toString(logits.scalar_type())) +
                         "; want floating point");
  }
  f.parameters = count_parameters(*model.ptr());
}

// A TorchScript file: its module is reloaded from the bytes for every copy.
ModelMaker open_script(const std::shared_ptr<const std::string>& bytes, ModelFile& f, std::string& metadata) {
  std::unordered_map<std::string, std::string> extra{{kMetadataFile, ""}};
  try {
    (void)load_script(*bytes, &extra);
  } catch (const std::exception& e) {
    // Not a TorchScript archive, one saved by a newer torch, or one calling an op this process
    // lacks (a custom op library not loaded): LibTorch's first line says which.
    const std::string why = error_summary(e);
    const bool custom_op = why.find("Unknown builtin op") != std::string::npos;
    throw ModelFileError(
        f.path + ": not a TorchScript model this LibTorch " + TORCH_VERSION + " can load: " + why +
        (custom_op ? " (a custom op: tipbench loads no op libraries; export the model without it)" : ""));
  }
  f.format = "torchscript";
  metadata = extra.at(kMetadataFile);
  return [bytes] { return torch::nn::AnyModule(ScriptedModel(bytes)); };
}

// A torch.export archive: read and prepared once, its tensors copied for every module.
ModelMaker open_exported(const std::string& bytes, const ModelFileRequest& request, ModelFile& f,
                         std::string& metadata) {
  std::shared_ptr<const ExportedArchive> archive;
  try {
    archive = read_exported_archive(bytes, request.allow_ops);
  } catch (const ExportedProgramError& e) {
    // The reasons quote the archive's own strings (op and value names): kept on one line.
    throw ModelFileError(f.path + ": not a torch.export program tipbench can train: " + one_line(e.what()));
  }
  f.format = "pt2";
  f.program = {{"runner", "c10::Dispatcher, op by op, autograd on (tipbench)"},
               {"schema_version", archive->schema_version},
               {"exported_with_torch", archive->torch_version},
               {"train_ops", std::to_string(archive->train->ops())},
               {"eval_ops", std::to_string(archive->eval->ops())}};
  metadata = archive->metadata;
  return [archive] { return torch::nn::AnyModule(ExportedModel(archive)); };
}

// Every check of use_model_file but the name's uniqueness among registered files.
ModelFile checked(const ModelFileRequest& request, const std::shared_ptr<const std::string>& bytes,
                  const std::string& sha256, ModelMaker& make) {
  ModelFile f;
  f.path = request.path;
  f.sha256 = sha256;
  std::string metadata;
  make = is_exported_archive(*bytes) ? open_exported(*bytes, request, f, metadata) : open_script(bytes, f, metadata);
  read_metadata(metadata, request, f);
  check_request(request, f);
  check_forward(make, f);
  return f;
}

}  // namespace

ModelFile inspect_model_file(const ModelFileRequest& request) {
  const auto bytes = read_bytes(request.path);
  ModelMaker make;
  return checked(request, bytes, sha256_of(*bytes), make);
}

const ModelFile& use_model_file(const ModelFileRequest& request) {
  std::lock_guard lock(registration_mutex());
  const auto bytes = read_bytes(request.path);
  const std::string sha256 = sha256_of(*bytes);  // hashed once: the lookup and the identity
  for (const auto& r : registered()) {
    if (r.file.sha256 == sha256) return r.file;
  }
  ModelMaker make;
  const ModelFile f = checked(request, bytes, sha256, make);
  register_model({{f.name, "file", f.input[1], f.classes,
                   "model file " + f.path + " (sha256 " + f.sha256.substr(0, 12) + ", " + std::to_string(f.parameters) +
                       " params)"},
                  [make](const ModelOptions&, int64_t) { return make(); }});
  registered().push_back({f, make});
  return registered().back().file;
}

const ModelFile* model_file(const std::string& name) {
  std::lock_guard lock(registration_mutex());
  for (const auto& r : registered()) {
    if (r.file.name == name) return &r.file;
  }
  return nullptr;
}

std::map<std::string, std::string> script_executor_settings() {
  const auto yes_no = [](bool b) { return std::string(b ? "true" : "false"); };
  return {{"graph_optimize", yes_no(torch::jit::getGraphExecutorOptimize())},
          {"profiling_executor", yes_no(torch::jit::getExecutorMode())},
          {"profiled_runs", std::to_string(torch::jit::getNumProfiledRuns().load())},
          {"tensorexpr_fuser", yes_no(torch::jit::tensorExprFuserEnabled())},
          {"fuse_on_cpu", yes_no(torch::jit::canFuseOnCPU())},
          {"fuse_on_gpu", yes_no(torch::jit::canFuseOnGPU())}};
}

void set_script_optimization(bool on) { torch::jit::setGraphExecutorOptimize(on); }

}  // namespace tipbench::models
