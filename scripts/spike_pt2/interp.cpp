// Spike (issue 30, .pt2; docs/own-model.md section 4): torch.export's training IR run from C++,
// op by op through c10::Dispatcher (findSchemaOrThrow + callBoxed), autograd on, the parameters
// as leaf tensors. Reads torch.export.save's archive (models/model.json, data/weights/*) with
// PyTorchStreamReader. Checks logits and every gradient against eager (float64), then times a
// float32 ResNet-18 step against the built-in resnet18 and the TorchScript file. Not part of the
// build (scripts/spike_pt2/run.sh builds and runs it): the way to models/src/exported_program.cpp.
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <map>
#include <string>

#include "tipbench/models/model.h"
#include "tipbench/models/model_file.h"
#include "tipbench/models/state_dict.h"

using json = nlohmann::json;

namespace {

c10::ScalarType scalar_type(int serde) {  // torch/_export/serde/schema.py ScalarType
  switch (serde) {
    case 1: return c10::kByte;
    case 2: return c10::kChar;
    case 3: return c10::kShort;
    case 4: return c10::kInt;
    case 5: return c10::kLong;
    case 6: return c10::kHalf;
    case 7: return c10::kFloat;
    case 8: return c10::kDouble;
    case 12: return c10::kBool;
    case 13: return c10::kBFloat16;
  }
  throw std::runtime_error("unsupported serialized dtype " + std::to_string(serde));
}

std::vector<int64_t> ints(const json& a) {
  std::vector<int64_t> out;
  for (const auto& v : a) out.push_back(v.contains("as_int") ? v.at("as_int").get<int64_t>() : v.get<int64_t>());
  return out;
}

std::string record(caffe2::serialize::PyTorchStreamReader& r, const std::string& name) {
  auto [data, size] = r.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

struct Program {
  json graph;
  json signature;
  std::map<std::string, torch::Tensor> state;  // parameters and buffers by their dotted names
};

Program load(const std::string& path) {
  caffe2::serialize::PyTorchStreamReader reader(path);
  Program p;
  const json model = json::parse(record(reader, "models/model.json"));
  p.graph = model.at("graph_module").at("graph");
  p.signature = model.at("graph_module").at("signature");
  const json config = json::parse(record(reader, "data/weights/model_weights_config.json")).at("config");
  for (const auto& [name, w] : config.items()) {
    const auto& meta = w.at("tensor_meta");
    const std::string bytes = record(reader, "data/weights/" + w.at("path_name").get<std::string>());
    auto options = torch::TensorOptions().dtype(scalar_type(meta.at("dtype").get<int>()));
    auto storage = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kByte);
    std::memcpy(storage.data_ptr(), bytes.data(), bytes.size());
    auto t = torch::empty({0}, options)
                 .set_(storage.view(options.dtype().toScalarType()).storage(), ints(meta.at("storage_offset"))[0],
                       ints(meta.at("sizes")), ints(meta.at("strides")))
                 .clone();
    if (w.at("is_param").get<bool>()) t.set_requires_grad(meta.at("requires_grad").get<bool>());
    p.state[name] = t;
  }
  return p;
}

// One argument of a node as an IValue.
c10::IValue value(const json& arg, const std::map<std::string, c10::IValue>& env) {
  const auto it_ = arg.begin();
  const std::string kind = it_.key();
  const json& v = it_.value();
  if (kind == "as_none") return c10::IValue();
  if (kind == "as_tensor") return env.at(v.at("name").get<std::string>());
  if (kind == "as_tensors") {
    c10::List<at::Tensor> list;
    for (const auto& t : v) list.push_back(env.at(t.at("name").get<std::string>()).toTensor());
    return list;
  }
  if (kind == "as_int") return v.get<int64_t>();
  if (kind == "as_ints") return ints(v);
  if (kind == "as_float") return v.get<double>();
  if (kind == "as_floats") return v.get<std::vector<double>>();
  if (kind == "as_bool") return v.get<bool>();
  if (kind == "as_bools") {
    c10::List<bool> list;
    for (const auto& b : v) list.push_back(b.get<bool>());
    return list;
  }
  if (kind == "as_string") return v.get<std::string>();
  if (kind == "as_scalar_type") return static_cast<int64_t>(scalar_type(v.get<int>()));
  throw std::runtime_error("unsupported argument kind " + kind);
}

// Runs the graph; returns the user outputs.
std::vector<torch::Tensor> run(const Program& p, const std::map<std::string, torch::Tensor>& state,
                               const torch::Tensor& input) {
  std::map<std::string, c10::IValue> env;
  for (const auto& spec : p.signature.at("input_specs")) {
    const auto it_ = spec.begin();
    const std::string kind = it_.key();
    const json& v = it_.value();
    const json& arg = v.at("arg");
    const std::string name = (arg.contains("name") ? arg : arg.at("as_tensor")).at("name").get<std::string>();
    if (kind == "parameter")
      env[name] = state.at(v.at("parameter_name").get<std::string>());
    else if (kind == "buffer")
      env[name] = state.at(v.at("buffer_name").get<std::string>());
    else if (kind == "user_input")
      env[name] = input;
    else
      throw std::runtime_error("unsupported input kind " + kind);
  }
  for (const auto& node : p.graph.at("nodes")) {
    std::string target = node.at("target").get<std::string>();  // torch.ops.aten.conv2d.default
    const std::string prefix = "torch.ops.";
    if (target.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported target " + target);
    target = target.substr(prefix.size());
    const auto dot1 = target.find('.'), dot2 = target.rfind('.');
    const std::string op = target.substr(0, dot1) + "::" + target.substr(dot1 + 1, dot2 - dot1 - 1);
    std::string overload = target.substr(dot2 + 1);
    if (overload == "default") overload = "";
    const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(op.c_str(), overload.c_str());
    const auto& schema = handle.schema();
    std::map<std::string, const json*> given;
    for (const auto& in : node.at("inputs")) given[in.at("name").get<std::string>()] = &in.at("arg");
    torch::jit::Stack stack;
    for (const auto& a : schema.arguments()) {
      auto it = given.find(a.name());
      if (it != given.end()) {
        c10::IValue v = value(*it->second, env);
        // Python wraps a number given for a Tensor argument (add_(num_batches_tracked, 1)); so do we.
        if (a.type()->kind() == c10::TypeKind::TensorType && (v.isInt() || v.isDouble() || v.isBool())) {
          auto t = c10::scalar_to_tensor(v.toScalar());
          t.unsafeGetTensorImpl()->set_wrapped_number(true);
          v = t;
        }
        stack.push_back(std::move(v));
      } else if (a.default_value())
        stack.push_back(*a.default_value());
      else
        throw std::runtime_error(op + ": no value for " + a.name());
    }
    handle.callBoxed(stack);
    const auto& outs = node.at("outputs");
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto it_ = outs[i].begin();
      const std::string kind = it_.key();
      const json& v = it_.value();
      if (kind == "as_tensor")
        env[v.at("name").get<std::string>()] = stack.at(i);
      else if (kind == "as_tensors") {
        auto list = stack.at(i).toTensorList();
        for (size_t k = 0; k < v.size(); ++k) env[v[k].at("name").get<std::string>()] = list.get(k);
      } else if (kind != "as_none")
        throw std::runtime_error("unsupported output kind " + kind);
    }
  }
  std::vector<torch::Tensor> out;
  for (const auto& spec : p.signature.at("output_specs")) {
    const auto it_ = spec.begin();
    const std::string kind = it_.key();
    const json& v = it_.value();
    if (kind == "user_output")
      out.push_back(env.at(v.at("arg").at("as_tensor").at("name").get<std::string>()).toTensor());
  }
  return out;
}

}  // namespace

int main() {
  for (std::string name : {"small_cnn", "resnet18"}) {
    Program p = load(name + ".pt2");
    std::map<std::string, torch::Tensor> ref;
    for (auto& [k, t] : tipbench::models::load_tensors(name + "_ref.pt")) ref[k] = t;
    auto logits = run(p, p.state, ref.at("input")).at(0);
    torch::nn::functional::cross_entropy(logits, ref.at("labels")).backward();
    double gdiff = 0;
    int grads = 0;
    for (const auto& [k, t] : p.state) {
      if (!t.requires_grad()) continue;
      gdiff = std::max(gdiff, (t.grad() - ref.at("grad." + k)).abs().max().item<double>());
      ++grads;
    }
    std::cout << name << ": " << p.graph.at("nodes").size() << " nodes, logits max|diff| "
              << (logits - ref.at("logits")).abs().max().item<double>() << ", " << grads << " grads max|diff| " << gdiff
              << "\n";
  }
  // Step time, float32 CPU, ResNet-18 batch 8: interpreted .pt2 vs built-in resnet18 vs the
  // TorchScript file (the --model-file path), interleaved blocks of 3 steps each.
  torch::manual_seed(0);
  Program p = load("resnet18_f32.pt2");
  auto builtin = tipbench::models::make_model("resnet18");
  const auto& file = tipbench::models::use_model_file({.path = TV_RESNET18});
  auto scripted = tipbench::models::make_model(file.name);
  builtin.ptr()->train();
  scripted.ptr()->train();
  const auto x = torch::randn({8, 3, 224, 224});
  const auto labels = torch::randint(1000, {8}, torch::kLong);
  auto step = [&](const std::string& arm) {
    if (arm == "interp") {
      for (auto& [k, t] : p.state)
        if (t.requires_grad()) t.mutable_grad() = torch::Tensor();
      torch::nn::functional::cross_entropy(run(p, p.state, x).at(0), labels).backward();
    } else {
      auto& m = arm == "builtin" ? builtin : scripted;
      m.ptr()->zero_grad();
      torch::nn::functional::cross_entropy(m.forward(x), labels).backward();
    }
  };
  const std::vector<std::string> arms{"builtin", "interp", "script"};
  for (const auto& a : arms)
    for (int i = 0; i < 5; ++i) step(a);
  std::map<std::string, std::vector<double>> ms;
  for (int block = 0; block < 7; ++block) {
    for (const auto& a : arms) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 3; ++i) step(a);
      ms[a].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 3);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (const auto& a : {"interp", "script"}) {
    std::vector<double> r;
    for (size_t i = 0; i < ms[a].size(); ++i) r.push_back(ms[a][i] / ms["builtin"][i]);
    std::cout << a << " " << median(ms[a]) << " ms vs built-in " << median(ms["builtin"]) << " ms: ratio median "
              << median(r) << " [" << *std::min_element(r.begin(), r.end()) << ", "
              << *std::max_element(r.begin(), r.end()) << "] over 7 interleaved blocks\n";
  }
  return 0;
}
