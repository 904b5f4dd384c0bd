#include "tipbench/models/model_flops.h"

namespace tipbench {

const ModelFlops* reference_flops(const std::string& model, std::int64_t image_size) {
  for (const auto& row : reference_flop_table()) {
    if (row.model == model && row.image_size == image_size) return &row;
  }
  return nullptr;
}

}  // namespace tipbench
