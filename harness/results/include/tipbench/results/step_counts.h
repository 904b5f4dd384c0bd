// Counted work: what an arm's step does, counted rather than timed (since schema 1.14). Counts do
// not depend on the machine's mood: a lost fusion, a new .item(), an extra copy or a recompile
// changes one, with no statistics needed (docs/measurement.md, "Counted work"). Taken once per arm
// and run (its block-0 trial), in a few untimed steps after the timed ones: the profiler's events
// of those steps (explain/profiled_counts.h counts them). Recorded in that trial; the gate compares
// an arm's counts by their own rule. Plain data, no LibTorch.
//   if (const StepCounts* c = counts_of(arm)) fmt::print("{} ops/step\n", c->ops_per_step);
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tipbench {

// One name's count per step: an op, a kernel, a copy's direction ("Memcpy HtoD"), a sync call.
struct NamedCount {
  std::string name;
  double per_step = 0;
  double bytes_per_step = 0;  // copies and memsets: the bytes they moved (0 for the others)
};

struct StepCounts {
  int steps = 0;       // counted steps (after one that is profiled but not counted)
  bool steady = true;  // every counted step had the same op, allocation and device-event counts
  // ATen ops dispatched (every op that reached the dispatcher: a name "ns::op", nested calls
  // included; not the autograd nodes or RecordFunction scopes around them), and those no other
  // op called (what the step's code, or autograd's engine, called itself).
  double ops_per_step = 0;
  double top_level_ops_per_step = 0;
  std::vector<NamedCount> ops;  // by name, most calls first
  // The measured device's allocator: calls that allocated, and their bytes (CPU: c10's CPU
  // allocator; CUDA: the caching allocator's blocks handed to tensors, cached or new).
  double allocations_per_step = 0;
  double allocated_bytes_per_step = 0;
  // CUDA only (nullopt on a CPU): kernels launched, copies by direction with their bytes, memsets,
  // and the host's synchronisations (calls that block the host until the device is done).
  std::optional<double> kernels_per_step;
  std::vector<NamedCount> kernels;  // by normalised name (kernel_names.h), most first
  std::vector<NamedCount> copies;   // "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", ...
  std::optional<double> memsets_per_step;
  std::optional<double> syncs_per_step;
  std::vector<NamedCount> syncs;  // "cudaStreamSynchronize", "cudaMemcpy" (a blocking copy), ...
  std::string error;              // why the steps could not be counted ("" when they were)
  // CPU instructions per step (since schema 1.15), user space, counted in their own steps on one
  // intra-op thread (profiling/instruction_counter.h), never in the profiled ones: nullopt when
  // not counted, and instructions_note says why (no hardware PMU, --instructions off, ...).
  std::optional<double> instructions_per_step;
  std::string instruction_counter;  // "perf_event" or "callgrind" (kInstructionCounters); "" none
  // The counter's own A/A spread within the run (since schema 1.16): (max - min) / mean of the
  // counted steps' counts, each step counted alone; nullopt under 2 counted steps.
  std::optional<double> instructions_spread;
  // oneDNN's ISA cap in the counting process (ONEDNN_MAX_CPU_ISA, since schema 1.16; "" none): it
  // picks which kernels run, so counts under different caps are not compared. A run under
  // Callgrind caps it at AVX unless the user chose (docs/measurement.md, "Counted instructions").
  std::string instructions_onednn_isa;
  std::string instructions_note;
};

// The counters an instruction count may come from: they count differently (Callgrind counts the
// whole process's user-space instructions as Valgrind runs them, perf_event the stepping thread's
// on the CPU), so counts of two counters are never compared.
inline constexpr const char* kInstructionCounters[] = {"perf_event", "callgrind"};

nlohmann::ordered_json step_counts_to_json(const StepCounts& c);
// Throws std::invalid_argument or nlohmann's exceptions on a bad document: names with control
// characters, counts that are negative or not finite, lists longer than kMaxCountedNames.
StepCounts step_counts_from_json(const nlohmann::ordered_json& j);
inline constexpr std::size_t kMaxCountedNames = 4096;

}  // namespace tipbench
