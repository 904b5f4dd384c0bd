#include "tipbench/results/step_breakdown.h"

#include "tipbench/common/checked_text.h"
#include "tipbench/common/json_number.h"

#include <cmath>
#include <stdexcept>

namespace tipbench {

namespace {

using ojson = nlohmann::ordered_json;

double amount(const ojson& j, const char* key) { return json_amount(j, key, "a breakdown's "); }

std::string name_of(const ojson& j, const char* key) {
  auto text = j.at(key).get<std::string>();
  check_name(std::string("a breakdown's ") + key, text);
  return text;
}

void check_count(const ojson& list, const char* what) {
  if (!list.is_array()) throw std::invalid_argument(std::string("a breakdown's ") + what + " is not a list");
  if (list.size() > kMaxBreakdownKeys)
    throw std::invalid_argument(std::string("a breakdown has more ") + what + " than " +
                                std::to_string(kMaxBreakdownKeys));
}

}  // namespace

ojson breakdown_to_json(const StepBreakdown& b) {
  ojson j = {{"steps", b.steps}, {"step_ms", b.step_ms}, {"keys", ojson::array()}};
  for (const auto& k : b.keys) {
    ojson key = {
        {"phase", k.phase}, {"op", k.op}, {"ms_per_step", k.ms_per_step}, {"calls_per_step", k.calls_per_step}};
    if (!k.kernels.empty()) {
      key["kernels"] = ojson::array();
      for (const auto& kernel : k.kernels)
        key["kernels"].push_back(
            {{"name", kernel.name}, {"ms_per_step", kernel.ms_per_step}, {"calls_per_step", kernel.calls_per_step}});
    }
    j["keys"].push_back(std::move(key));
  }
  if (b.gpu_idle_host_wait_ms) j["gpu_idle_host_wait_ms"] = *b.gpu_idle_host_wait_ms;
  if (b.gpu_idle_other_ms) j["gpu_idle_other_ms"] = *b.gpu_idle_other_ms;
  if (b.device_events_per_step) j["device_events_per_step"] = *b.device_events_per_step;
  if (!b.memory_device.empty()) {
    j["memory_device"] = b.memory_device;
    j["peak_bytes"] = b.peak_bytes;
    j["peak"] = ojson::array();
    for (const auto& m : b.peak) j["peak"].push_back({{"phase", m.phase}, {"op", m.op}, {"bytes", m.bytes}});
  }
  if (!b.error.empty()) j["error"] = b.error;
  return j;
}

StepBreakdown breakdown_from_json(const ojson& j) {
  StepBreakdown b;
  b.steps = json_integer<int>(j, "steps");
  if (b.steps < 0) throw std::invalid_argument("a breakdown's steps is negative");
  b.step_ms = amount(j, "step_ms");
  check_count(j.at("keys"), "keys");
  for (const auto& key : j.at("keys")) {
    BreakdownKey k{.phase = name_of(key, "phase"),
                   .op = name_of(key, "op"),
                   .ms_per_step = amount(key, "ms_per_step"),
                   .calls_per_step = amount(key, "calls_per_step")};
    if (key.contains("kernels")) {
      check_count(key.at("kernels"), "kernels");
      for (const auto& kernel : key.at("kernels"))
        k.kernels.push_back({name_of(kernel, "name"), amount(kernel, "ms_per_step"), amount(kernel, "calls_per_step")});
    }
    b.keys.push_back(std::move(k));
  }
  if (j.contains("gpu_idle_host_wait_ms")) b.gpu_idle_host_wait_ms = amount(j, "gpu_idle_host_wait_ms");
  if (j.contains("gpu_idle_other_ms")) b.gpu_idle_other_ms = amount(j, "gpu_idle_other_ms");
  if (j.contains("device_events_per_step")) b.device_events_per_step = amount(j, "device_events_per_step");
  if (j.contains("memory_device")) {
    b.memory_device = name_of(j, "memory_device");
    b.peak_bytes = json_integer<std::int64_t>(j, "peak_bytes");
    check_count(j.at("peak"), "memory shares");
    for (const auto& m : j.at("peak"))
      b.peak.push_back({name_of(m, "phase"), name_of(m, "op"), json_integer<std::int64_t>(m, "bytes")});
  }
  if (j.contains("error")) b.error = name_of(j, "error");
  return b;
}

}  // namespace tipbench
