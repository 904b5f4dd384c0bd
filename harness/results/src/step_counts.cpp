#include "tipbench/results/step_counts.h"

#include "tipbench/common/checked_text.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/json_number.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace tipbench {

namespace {

constexpr std::size_t kMaxIsaName = 32;  // oneDNN's names: "AVX", "AVX512_CORE_AMX_FP16", ...

using ojson = nlohmann::ordered_json;

double count_at(const ojson& j, const char* key) { return json_amount(j, key, "counts: "); }

std::optional<double> optional_count(const ojson& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return count_at(j, key);
}

ojson names_to_json(const std::vector<NamedCount>& names, bool with_bytes) {
  ojson out = ojson::array();
  for (const auto& n : names) {
    ojson x = {{"name", n.name}, {"per_step", n.per_step}};
    if (with_bytes) x["bytes_per_step"] = n.bytes_per_step;
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<NamedCount> names_from_json(const ojson& j, const char* key) {
  std::vector<NamedCount> out;
  if (!j.contains(key)) return out;
  const auto& list = j.at(key);
  if (!list.is_array() || list.size() > kMaxCountedNames)
    throw std::invalid_argument(std::string("counts: ") + key + " is not a list of at most " +
                                std::to_string(kMaxCountedNames));
  for (const auto& x : list) {
    NamedCount n;
    n.name = x.at("name").get<std::string>();
    check_name(std::string("counts: a name in ") + key, n.name);
    n.per_step = count_at(x, "per_step");
    if (x.contains("bytes_per_step")) n.bytes_per_step = count_at(x, "bytes_per_step");
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

ojson step_counts_to_json(const StepCounts& c) {
  ojson j = {{"steps", c.steps},
             {"steady", c.steady},
             {"ops_per_step", c.ops_per_step},
             {"top_level_ops_per_step", c.top_level_ops_per_step},
             {"ops", names_to_json(c.ops, false)},
             {"allocations_per_step", c.allocations_per_step},
             {"allocated_bytes_per_step", c.allocated_bytes_per_step}};
  if (c.kernels_per_step) {
    j["kernels_per_step"] = *c.kernels_per_step;
    j["kernels"] = names_to_json(c.kernels, false);
    j["copies"] = names_to_json(c.copies, true);
  }
  if (c.memsets_per_step) j["memsets_per_step"] = *c.memsets_per_step;
  if (c.syncs_per_step) {
    j["syncs_per_step"] = *c.syncs_per_step;
    j["syncs"] = names_to_json(c.syncs, false);
  }
  if (!c.error.empty()) j["error"] = c.error;
  if (c.instructions_per_step) {
    j["instructions_per_step"] = *c.instructions_per_step;
    j["instruction_counter"] = c.instruction_counter;
    if (c.instructions_spread) j["instructions_spread"] = *c.instructions_spread;
    if (!c.instructions_onednn_isa.empty()) j["instructions_onednn_isa"] = c.instructions_onednn_isa;
  }
  if (!c.instructions_note.empty()) j["instructions_note"] = c.instructions_note;
  return j;
}

StepCounts step_counts_from_json(const ojson& j) {
  StepCounts c;
  c.steps = json_integer<int>(j, "steps");
  if (c.steps < 0) throw std::invalid_argument("counts: steps is negative");
  c.steady = j.at("steady").get<bool>();
  c.ops_per_step = count_at(j, "ops_per_step");
  c.top_level_ops_per_step = count_at(j, "top_level_ops_per_step");
  c.ops = names_from_json(j, "ops");
  c.allocations_per_step = count_at(j, "allocations_per_step");
  c.allocated_bytes_per_step = count_at(j, "allocated_bytes_per_step");
  c.kernels_per_step = optional_count(j, "kernels_per_step");
  c.kernels = names_from_json(j, "kernels");
  c.copies = names_from_json(j, "copies");
  c.memsets_per_step = optional_count(j, "memsets_per_step");
  c.syncs_per_step = optional_count(j, "syncs_per_step");
  c.syncs = names_from_json(j, "syncs");
  if (j.contains("error")) {
    c.error = j.at("error").get<std::string>();
    check_name("counts: error", c.error);
  }
  c.instructions_per_step = optional_count(j, "instructions_per_step");
  if (c.instructions_per_step) {
    c.instruction_counter = j.at("instruction_counter").get<std::string>();
    if (std::ranges::find(kInstructionCounters, c.instruction_counter) == std::end(kInstructionCounters))
      throw std::invalid_argument("counts: instruction_counter '" + one_line(abbreviated(c.instruction_counter, 40)) +
                                  "' is none of perf_event, callgrind");
    c.instructions_spread = optional_count(j, "instructions_spread");
    if (j.contains("instructions_onednn_isa")) {
      c.instructions_onednn_isa = j.at("instructions_onednn_isa").get<std::string>();
      check_name("counts: instructions_onednn_isa", c.instructions_onednn_isa);
      if (c.instructions_onednn_isa.empty() || c.instructions_onednn_isa.size() > kMaxIsaName)
        throw std::invalid_argument("counts: instructions_onednn_isa is empty or longer than 32 characters");
    }
  }
  if (j.contains("instructions_note")) {
    c.instructions_note = j.at("instructions_note").get<std::string>();
    check_name("counts: instructions_note", c.instructions_note);
  }
  return c;
}

}  // namespace tipbench
