#include "largest_batch.h"

#include "scoped_workload.h"
#include "training.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <stdexcept>

namespace tipbench::suites {

namespace {
constexpr const char* kLargest = "largest";
}  // namespace

CaseSpec largest_batch_case(const std::string& model, std::vector<ArmSpec> arms) {
  return {{{"model", model}, {"batch", kLargest}}, std::move(arms)};
}

bool is_largest_batch_case(const CaseSpec& c) {
  return std::any_of(c.params.begin(), c.params.end(),
                     [](const auto& kv) { return kv.first == "batch" && kv.second == kLargest; });
}

std::optional<std::string> largest_batch_text(const ArmResult& arm) {
  if (!arm.info.contains("largest_batch_search")) return std::nullopt;
  try {
    return largest_batch_words(batch_search_from_json(arm.info["largest_batch_search"]));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> LargestBatchCases::skip_reason(const SuiteContext& context, const CaseSpec& c) {
  if (!is_largest_batch_case(c)) return std::nullopt;
  return largest_batch_search_unavailable(context.device);
}

void LargestBatchCases::search_case(const Suite& suite, const SuiteContext& context, const CaseSpec& c,
                                    const CaseResult& so_far) const {
  // The suite's skip_reason keeps this to CUDA (largest_batch_search_unavailable). A search never
  // throws (a failed probe is "does not fit"), so one arm's trouble stays in that arm's case.
  if (!is_largest_batch_case(c)) return;
  for (const auto& arm : c.arms) {
    if (suite.skip_reason(context, c, arm)) continue;
    const std::string key = arm_name(suite.name(), c, arm);
    const auto earlier =
        std::find_if(so_far.arms.begin(), so_far.arms.end(), [&](const ArmResult& a) { return a.name == key; });
    if (earlier != so_far.arms.end() && earlier->info.contains("largest_batch_search") && !earlier->trials.empty()) {
      // A resumed case: its earlier blocks ran at this batch, so its later ones do too.
      searches_.remember(key, batch_search_from_json(earlier->info.at("largest_batch_search")));
      continue;
    }
    search(suite, context, c, arm);
  }
}

std::unique_ptr<Workload> LargestBatchCases::prepare(const Suite& suite, const SuiteContext& context, const CaseSpec& c,
                                                     const ArmSpec& arm) const {
  if (!is_largest_batch_case(c)) return make_at_(context, c, arm, level_int(c.params, "batch"));
  const BatchSearch found = search(suite, context, c, arm);
  if (found.largest == 0) {
    const std::string why = found.probes.empty() ? "" : ": " + found.probes.back().error;
    throw std::runtime_error(fmt::format("{}: not even batch 1 fits{}", arm_name(suite.name(), c, arm), why));
  }
  // Never kept: the batch fits a device that holds nothing else, so no other arm's kept model and
  // inputs may stay beside it.
  return with_info(make_at_(context, c, arm, found.largest), {{"largest_batch_search", found}}, Keep::never);
}

BatchSearch LargestBatchCases::search(const Suite& suite, const SuiteContext& context, const CaseSpec& c,
                                      const ArmSpec& arm) const {
  auto make = [&](std::int64_t batch) { return make_at_(context, c, arm, batch); };
  SuiteContext defaults = context;
  defaults.batch_size = 0;
  return searches_.find(arm_name(suite.name(), c, arm), context.device, make,
                        batch_size_for(defaults, level(c.params, "model")));
}

}  // namespace tipbench::suites
