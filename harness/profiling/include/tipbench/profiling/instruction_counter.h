// Internal: counted CPU instructions per step (StepCounts::instructions_per_step), the count
// PyTorch gates its own eager overhead on (benchmarks/instruction_counts, torch.utils.benchmark's
// collect_callgrind). In an arm's counting trial, after its profiled steps: one uncounted step,
// then `steps` counted ones, on one intra-op thread (restored after), so that no worker thread's
// spin-wait counts and the count is the step's own work. Two counters:
//  - perf_event (MeasureSettings::instructions "auto"): the CPU's retired user-space instructions
//    of the stepping thread, where the kernel exposes a hardware PMU to this process;
//  - callgrind ("callgrind"): the run runs under Valgrind's Callgrind (`run --instructions
//    callgrind` starts it so, run_under_callgrind.h) with instrumentation off; the counted steps
//    switch it on (CALLGRIND_START_INSTRUMENTATION), each ends with a dump, read back.
// Each counted step is counted alone: the count is their mean, and their spread (max - min over
// the mean) is the counter's own A/A spread within the run, which the gate weighs its tolerance
// against (gate/count_checks.h).
// Neither is in any timed step. Where neither applies, the note says why and nothing is counted.
//   auto count = count_instructions(*workload, device, 2, injector, settings.instructions);
#pragma once

#include "tipbench/device/slowdown.h"
#include "tipbench/suite/suite.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::detail {

// The variable `run --instructions callgrind` sets for the run it starts under Callgrind: the
// dump file's path (--callgrind-out-file); each dump N is written to "<path>.N".
inline constexpr const char* kCallgrindOutVariable = "TIPBENCH_CALLGRIND_OUT";

struct InstructionCount {
  std::optional<double> per_step;  // nullopt: not counted
  std::optional<double> spread;    // (max - min) / mean of the steps' counts; nullopt under 2 steps
  std::string onednn_isa;          // oneDNN's ISA cap while counting (ONEDNN_MAX_CPU_ISA), "" none
  std::string counter;             // "perf_event" or "callgrind" when counted
  std::string note;                // why not counted ("" when counted)
};

// mode: MeasureSettings::instructions ("auto", "callgrind" or "off").
InstructionCount count_instructions(Workload& workload, const c10::Device& device, int steps,
                                    SlowdownInjector& injector, const std::string& mode);

// The count of steps counted one by one: their mean per step and, from 2 steps, their spread.
InstructionCount counted_steps(const std::vector<std::uint64_t>& step_counts, std::string counter);

// A Callgrind dump's instruction count: its "totals:" line (else "summary:"), whose first event
// is Ir with Callgrind's default events. nullopt when the text has neither or it is no number.
std::optional<std::uint64_t> callgrind_total(std::istream& dump);

// A dump's trigger: the "desc: Trigger: ..." line's text ("Client Request: tipbench 3"), "" none.
std::string callgrind_trigger(std::istream& dump);

}  // namespace tipbench::detail
