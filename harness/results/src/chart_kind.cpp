#include "tipbench/results/chart_kind.h"

namespace tipbench {

namespace {

constexpr ChartKind kKinds[] = {ChartKind::none, ChartKind::batch_curves, ChartKind::memory_vs_time, ChartKind::scaling,
                                ChartKind::pipeline_ladder};

}  // namespace

std::string_view to_string(ChartKind kind) {
  switch (kind) {
    case ChartKind::none: return "none";
    case ChartKind::batch_curves: return "batch_curves";
    case ChartKind::memory_vs_time: return "memory_vs_time";
    case ChartKind::scaling: return "scaling";
    case ChartKind::pipeline_ladder: return "pipeline_ladder";
  }
  return "none";
}

ChartKind chart_kind_from_string(std::string_view name) {
  for (const ChartKind kind : kKinds) {
    if (to_string(kind) == name) return kind;
  }
  return ChartKind::none;
}

}  // namespace tipbench
