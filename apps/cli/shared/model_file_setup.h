// Internal to the CLI: `run --model-file` (docs/own-model.md). The run's model-file flags become
// the context's process_setup, which every process of the run applies before it builds a model
// (the run itself, each fresh-process trial's child, each rank): load and check the file, register
// it as a model, set the TorchScript executor. Example:
//   SuiteContext c = ...;  c.process_setup = model_file_setup(options);
//   const models::ModelFile* f = apply_process_setup(c.process_setup);   // InputError when bad
#pragma once

#include "tipbench/models/model_file.h"
#include "tipbench/results/recorded_options.h"

#include <nlohmann/json.hpp>

namespace tipbench::cli {

// Null without --model-file; else {"model_file": absolute path, "allow_trace", "allow_ops", "input", "classes",
// "jit_optimize"}.
nlohmann::json model_file_setup(const RunOptions& o);

// Does what the setup says in this process; returns the registered file (nullptr for a null
// setup). Throws InputError (exit 2) for a file that cannot be used.
const models::ModelFile* apply_process_setup(const nlohmann::json& setup);

// What the result records of the file (RunContext::model_file): identity, metadata, executor.
nlohmann::json model_file_record(const models::ModelFile& file);

}  // namespace tipbench::cli
