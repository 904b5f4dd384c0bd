#include "scripted_model.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace tipbench::models {

torch::jit::Module load_script(const std::string& file_bytes,
                               std::unordered_map<std::string, std::string>* extra_files) {
  std::istringstream in(file_bytes);
  torch::jit::ExtraFilesMap none;
  return torch::jit::load(in, torch::kCPU, extra_files ? *extra_files : none);
}

ScriptedModelImpl::ScriptedModelImpl(std::shared_ptr<const std::string> file_bytes)
    : file_bytes_(std::move(file_bytes)) {
  reset();
}

void ScriptedModelImpl::reset() {
  script_ = load_script(*file_bytes_);
  auto flat = [](std::string name) {
    std::replace(name.begin(), name.end(), '.', '/');
    return name;
  };
  // A frozen parameter (requires_grad false) stays frozen: register_parameter keeps the flag given.
  for (const auto& p : script_.named_parameters(/*recurse=*/true)) {
    register_parameter(flat(p.name), p.value, p.value.requires_grad());
  }
  for (const auto& b : script_.named_buffers(/*recurse=*/true)) register_buffer(flat(b.name), b.value);
  script_.train(is_training());
}

torch::Tensor ScriptedModelImpl::forward(torch::Tensor images) {
  c10::IValue out = script_.forward({std::move(images)});
  if (out.isTuple()) out = out.toTupleRef().elements().at(0);
  if (!out.isTensor()) throw std::runtime_error("the model file's forward returned " + out.tagKind() + ", not logits");
  return out.toTensor();
}

void ScriptedModelImpl::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

}  // namespace tipbench::models
