#include "model_file_setup.h"

#include "tipbench/results/result.h"  // InputError

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

namespace tipbench::cli {

namespace {

// "3,224,224" (checked by model_file_problems) -> {3, 224, 224}; "" -> {}.
std::vector<std::int64_t> shape_of(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::stoll(part));
  return out;
}

}  // namespace

nlohmann::json model_file_setup(const RunOptions& o) {
  if (o.model_file.empty()) return nullptr;
  return {{"model_file", std::filesystem::absolute(o.model_file).string()},
          {"allow_trace", o.allow_trace},
          {"allow_ops", o.allow_ops},
          {"input", shape_of(o.model_input)},
          {"classes", o.model_classes},
          {"jit_optimize", o.jit_optimize == "on"}};
}

const models::ModelFile* apply_process_setup(const nlohmann::json& setup) {
  if (setup.is_null()) return nullptr;
  models::set_script_optimization(setup.at("jit_optimize").get<bool>());
  try {
    return &models::use_model_file({.path = setup.at("model_file").get<std::string>(),
                                    .allow_trace = setup.at("allow_trace").get<bool>(),
                                    .allow_ops = setup.value("allow_ops", std::vector<std::string>{}),
                                    .input = setup.at("input").get<std::vector<std::int64_t>>(),
                                    .classes = setup.at("classes").get<std::int64_t>()});
  } catch (const models::ModelFileError& e) {
    throw InputError(fmt::format("--model-file {}", e.what()));
  }
}

nlohmann::json model_file_record(const models::ModelFile& file) {
  nlohmann::json out = {{"path", file.path},
                        {"sha256", file.sha256},
                        {"name", file.name},
                        {"input", file.input},
                        {"classes", file.classes},
                        {"how", file.how},
                        {"parameters", file.parameters},
                        {"format", file.format},
                        {"executor", file.program.empty() ? models::script_executor_settings() : file.program}};
  if (!file.warning.empty()) out["warning"] = file.warning;
  out["metadata"] = file.metadata.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(file.metadata);
  return out;
}

}  // namespace tipbench::cli
