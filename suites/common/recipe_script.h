// The Python side of a recipe: one plain PyTorch training script that applies the ingredients'
// lines (each marked with its tip), around a small model and random batches that stand in for the
// user's. It runs as written (tests run it in the project's Python), so every line a suite
// contributes is checked. Example:
//   std::string py = recipe_script({find_ingredient("amp:bf16")}, {.device = "cuda"});
#pragma once

#include "recipe.h"

#include <string>
#include <vector>

namespace tipbench::suites {

struct ScriptOptions {
  std::string device = "cpu";       // the default of the script's --device
  std::vector<std::string> header;  // comment lines at the top (what was measured, by which command)
};

std::string recipe_script(const std::vector<const Ingredient*>& ingredients, const ScriptOptions& options);

// The lines of a recipe script that these tips (keys, "amp:bf16") contributed, by whole marks:
// cpu_threads:t1 never claims a line of cpu_threads:t16.
std::string lines_applying(const std::string& script, const std::vector<std::string>& keys);

// The header notes a recipe script holds for these tips ("# allocator:jemalloc: start Python with
// ..." -> "allocator:jemalloc: start Python with ..."), in the script's order.
std::vector<std::string> notes_of(const std::string& script, const std::vector<std::string>& keys);

}  // namespace tipbench::suites
