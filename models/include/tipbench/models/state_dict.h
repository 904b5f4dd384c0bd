// Loads a state dict saved by PyTorch (`torch.save(model.state_dict(), path)`, the zip format)
// into a C++ module by parameter/buffer name, and writes one Python can torch.load. Example:
//   auto net = tipbench::models::make_model("resnet50");
//   tipbench::models::load_state_dict(*net.ptr(), "resnet50_torchvision.pt");   // strict: throws
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace tipbench::models {

struct LoadReport {
  std::string path;                     // the file read
  std::vector<std::string> missing;     // in the module, not in the file (module order)
  std::vector<std::string> unexpected;  // in the file, not in the module (file order)
  std::vector<std::string> mismatched;  // "name: expected [64, 3, 7, 7], got [64, 3, 3, 3]"
  std::vector<std::string> loaded;      // names copied into the module

  bool ok() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
  // "state dict 'path': 1 missing, 1 unexpected, 1 mismatched\n  missing: fc.bias\n..."
  std::string describe() const;
};

// The name -> tensor entries of a torch.save'd dict of tensors (a state dict), in file order, on
// the CPU. Reads the zip format of torch.save and torch::pickle_save; collections.OrderedDict (what
// state_dict() returns) and plain dicts both work. Throws std::runtime_error naming the path when
// the file cannot be opened, is not such an archive, or holds anything but str -> Tensor.
std::vector<std::pair<std::string, torch::Tensor>> load_tensors(const std::string& path);

// Copies every tensor whose name and shape match a parameter or buffer of `module` (values are
// converted to the target's dtype and device), under NoGradGuard.
// strict: when anything is missing, unexpected or mismatched, throws std::runtime_error with
// describe() and leaves the module untouched. Not strict: copies what matches and returns the
// report. An unreadable or corrupt file throws std::runtime_error naming the path.
LoadReport load_state_dict(torch::nn::Module& module, const std::string& path, bool strict = true);

// Writes all parameters and buffers (by name, detached, copied to the CPU) as a plain dict of
// str -> Tensor in torch.save's zip format (LibTorch's pickler, untagged): Python reads it with
// torch.load(path, weights_only=True) and load_state_dict() reads it back. Throws
// std::runtime_error naming the path when the file cannot be written.
void save_state_dict(const torch::nn::Module& module, const std::string& path);

}  // namespace tipbench::models
