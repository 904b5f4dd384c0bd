// The chart a suite's cases are drawn as in the HTML report, beside the charts every suite gets
// (per-tip speedup, change, two-factor heatmap, history trend). A suite declares it
// (Suite::chart), the result records it per suite (`chart`, since schema 1.4), and the report
// draws what the record says. Each kind reads one documented encoding of the arms:
//   batch_curves     throughput and memory against each arm's numeric `batch` level
//   memory_vs_time   peak memory against step time, one point per arm with a `checkpoint` level
//   scaling          throughput against each arm's numeric `world_size` level, and ideal scaling
//   pipeline_ladder  a case with the param `pipeline:ladder`: a bar per rung (arm), and the
//                    `synthetic` arm's throughput as the model's consumption
// Example:
//   ChartKind chart() const override { return ChartKind::batch_curves; }
#pragma once

#include <string_view>

namespace tipbench {

enum class ChartKind { none, batch_curves, memory_vs_time, scaling, pipeline_ladder };

std::string_view to_string(ChartKind kind);  // "none", "batch_curves", ...
// The kind a recorded name stands for; a name this reader does not know (a newer minor version's
// chart) is none: the suite gets the common charts only.
ChartKind chart_kind_from_string(std::string_view name);

}  // namespace tipbench
