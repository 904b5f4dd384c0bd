#include "exported_model.h"

#include <algorithm>

namespace tipbench::models {

ExportedModelImpl::ExportedModelImpl(std::shared_ptr<const ExportedArchive> archive) : archive_(std::move(archive)) {
  reset();
}

void ExportedModelImpl::reset() {
  state_.clear();
  for (const auto& stored : archive_->state) {
    std::string name = stored.name;
    std::replace(name.begin(), name.end(), '.', '/');
    torch::Tensor copy = stored.value.detach().clone();
    switch (stored.kind) {
      case ExportedTensor::Kind::parameter:
        state_.push_back(register_parameter(name, copy, stored.value.requires_grad()));
        break;
      case ExportedTensor::Kind::buffer: state_.push_back(register_buffer(name, copy)); break;
      case ExportedTensor::Kind::constant: state_.push_back(register_buffer("constant/" + name, copy)); break;
    }
  }
}

torch::Tensor ExportedModelImpl::forward(torch::Tensor images) {
  const ExportedProgram& program = is_training() ? *archive_->train : *archive_->eval;
  return program.run(state_, images);
}

}  // namespace tipbench::models
