#include "tipbench/gate/merge.h"

#include "tipbench/environment/run_conditions.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

namespace tipbench::gate {

namespace {

void require_same_shape(const Result& first, const Result& other, std::size_t index) {
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("block {} of the interleaved session does not match block 0: {}", index, what));
  };
  if (first.suites.size() != other.suites.size()) fail("different suites");
  for (std::size_t s = 0; s < first.suites.size(); ++s) {
    const auto& a = first.suites[s];
    const auto& b = other.suites[s];
    if (a.name != b.name || a.cases.size() != b.cases.size()) fail("suite " + a.name + " differs");
    for (std::size_t c = 0; c < a.cases.size(); ++c) {
      if (a.cases[c].name != b.cases[c].name || a.cases[c].arms.size() != b.cases[c].arms.size()) {
        fail("case " + a.cases[c].name + " differs");
      }
      for (std::size_t i = 0; i < a.cases[c].arms.size(); ++i) {
        if (a.cases[c].arms[i].arm != b.cases[c].arms[i].arm) fail("arms of " + a.cases[c].name + " differ");
      }
    }
  }
}

}  // namespace

Result merge_blocks(const std::vector<Result>& blocks) {
  if (blocks.empty()) throw InputError("an interleaved session needs at least one block");
  Result merged = blocks.front();
  for (auto& suite : merged.suites) {
    for (auto& c : suite.cases) {
      for (auto& arm : c.arms) arm.trials.clear();
    }
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    require_same_shape(merged, blocks[b], b);
    for (std::size_t s = 0; s < merged.suites.size(); ++s) {
      for (std::size_t c = 0; c < merged.suites[s].cases.size(); ++c) {
        auto& arms = merged.suites[s].cases[c].arms;
        const auto& source = blocks[b].suites[s].cases[c].arms;
        for (std::size_t i = 0; i < arms.size(); ++i) {
          const bool broken = source[i].status == ArmStatus::failed || source[i].status == ArmStatus::invalid;
          if (broken && arms[i].status == ArmStatus::ok) {
            arms[i].status = source[i].status;
            arms[i].reason = fmt::format("block {}: {}", b, source[i].reason);
          }
          if (arms[i].info.empty() || arms[i].info.is_null()) arms[i].info = source[i].info;
          for (Trial t : source[i].trials) {
            t.block = static_cast<int>(b);
            arms[i].trials.push_back(std::move(t));
          }
        }
      }
    }
  }
  merged.context.settings.blocks = static_cast<int>(blocks.size());
  std::vector<nlohmann::json> conditions;
  for (const auto& block : blocks) conditions.push_back(block.context.conditions);
  merged.context.conditions = combine_conditions(conditions);
  for (auto& suite : merged.suites) {
    for (auto& c : suite.cases) summarize_case(c, merged.context.settings);
  }
  return merged;
}

}  // namespace tipbench::gate
