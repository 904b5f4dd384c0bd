#include "tipbench/profiling/instruction_counter.h"

#include "tipbench/device/step_timer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tipbench::detail {

namespace {

// One intra-op thread while counting; the arm's own count afterwards. A step's ops run on the
// calling thread then (OpenMP runs a one-thread region inline), and no idle worker's spin-wait
// counts.
class OneIntraOpThread {
 public:
  OneIntraOpThread() : threads_(at::get_num_threads()) {
    if (threads_ != 1) at::set_num_threads(1);
  }
  ~OneIntraOpThread() {
    if (threads_ != 1) at::set_num_threads(threads_);
  }
  OneIntraOpThread(const OneIntraOpThread&) = delete;
  OneIntraOpThread& operator=(const OneIntraOpThread&) = delete;

 private:
  int threads_;
};

void step_once(Workload& workload, SlowdownInjector& injector) {
  injector.before_step();
  workload.step();
  injector.after_step();
}

std::string perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return std::getline(in, level) ? level : "unknown";
}

// The stepping thread's user-space instructions, read with their enabled and running times: a
// counter the kernel multiplexed with others (running < enabled) holds an estimate, not a count.
InstructionCount count_with_perf_event(Workload& workload, const c10::Device& device, int steps,
                                       SlowdownInjector& injector) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof(attr);
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return {.note = fmt::format("perf_event_open: {} (no hardware PMU this process may read; perf_event_paranoid {}); "
                                "`run --instructions callgrind` counts them under Callgrind",
                                std::strerror(error), perf_event_paranoid())};
  }
  struct Closer {
    long fd;
    ~Closer() { ::close(static_cast<int>(fd)); }
  } closer{fd};
  const int handle = static_cast<int>(fd);
  const OneIntraOpThread one_thread;
  step_once(workload, injector);  // uncounted: the first step on one thread
  synchronize(device);
  // Read after each step (the read's own user-space instructions are a few dozen of millions).
  std::uint64_t values[3] = {};  // count, time enabled, time running
  const auto read_counter = [&] {
    return ::read(handle, values, sizeof(values)) == static_cast<ssize_t>(sizeof(values));
  };
  ::ioctl(handle, PERF_EVENT_IOC_RESET, 0);
  ::ioctl(handle, PERF_EVENT_IOC_ENABLE, 0);
  std::vector<std::uint64_t> step_counts;
  std::uint64_t before = 0;
  for (int i = 0; i < steps; ++i) {
    step_once(workload, injector);
    synchronize(device);
    if (!read_counter()) {
      return {.note = fmt::format("perf_event: reading the counter failed: {}", std::strerror(errno))};
    }
    step_counts.push_back(values[0] - before);
    before = values[0];
  }
  ::ioctl(handle, PERF_EVENT_IOC_DISABLE, 0);
  if (values[2] < values[1]) {
    return {.note = "perf_event: the counter was shared with other events (multiplexed): an estimate, not kept"};
  }
  return counted_steps(step_counts, "perf_event");
}

// One dump's instruction count, checked to be the dump of `trigger`; the file is removed once read
// (a run writes one per counted step).
struct DumpTotal {
  std::optional<std::uint64_t> total;
  std::string problem;  // why there is none
};
DumpTotal dump_total(const std::string& path, const std::string& trigger) {
  std::stringstream text;
  {
    std::ifstream dump(path);
    if (!dump) return {.problem = fmt::format("callgrind: its dump {} is not there", path)};
    text << dump.rdbuf();
  }
  std::remove(path.c_str());
  if (callgrind_trigger(text) != "Client Request: " + trigger) {
    return {.problem = fmt::format("callgrind: {} is not the dump of this count ('{}')", path, trigger)};
  }
  text.clear();
  text.seekg(0);
  const auto total = callgrind_total(text);
  if (!total) return {.problem = fmt::format("callgrind: {} holds no totals line", path)};
  return {.total = total};
}

// Under Callgrind, started with instrumentation off (--instr-atstart=no): on for the counted steps
// alone, each step ending with a dump whose trigger names it, read back from "<out>.<N>".
InstructionCount count_with_callgrind(Workload& workload, const c10::Device& device, int steps,
                                      SlowdownInjector& injector) {
  const char* out = std::getenv(kCallgrindOutVariable);
  if (RUNNING_ON_VALGRIND == 0 || out == nullptr || *out == '\0') {
    return {.note =
                "--instructions callgrind: this process is not the run `tipbench run --instructions callgrind` "
                "starts under Callgrind"};
  }
  static int dumps = 0;               // Callgrind numbers a process's dumps 1, 2, ... in order
  std::vector<std::string> triggers;  // made before counting: their formatting is no step's work
  for (int i = 0; i < steps; ++i) triggers.push_back(fmt::format("tipbench {}", ++dumps));
  const int first_dump = dumps - steps + 1;
  const OneIntraOpThread one_thread;
  step_once(workload, injector);
  synchronize(device);
  // Each step alone: a dump writes the counts since the last one and zeroes them.
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < steps; ++i) {
    step_once(workload, injector);
    synchronize(device);
    CALLGRIND_DUMP_STATS_AT(triggers[static_cast<std::size_t>(i)].c_str());
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  std::vector<std::uint64_t> step_counts;
  for (int i = 0; i < steps; ++i) {
    const std::string path = fmt::format("{}.{}", out, first_dump + i);
    const auto read = dump_total(path, triggers[static_cast<std::size_t>(i)]);
    if (!read.total) return {.note = read.problem};
    step_counts.push_back(*read.total);
  }
  return counted_steps(step_counts, "callgrind");
}

std::optional<std::uint64_t> first_number(std::string_view text) {
  const auto start = text.find_first_not_of(' ');
  if (start == std::string_view::npos) return std::nullopt;
  text.remove_prefix(start);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || (end != text.data() + text.size() && *end != ' ')) return std::nullopt;
  return value;
}

// oneDNN reads ONEDNN_MAX_CPU_ISA, or its older name DNNL_MAX_CPU_ISA, once (its documented
// run-time ISA control). A value that is no ISA name is recorded as "unreadable".
std::string onednn_isa_cap() {
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const std::string_view cap = value;
    const bool a_name = cap.size() <= 32 && std::ranges::all_of(cap, [](char ch) {
                          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
                        });
    return a_name ? std::string(cap) : "unreadable";
  }
  return "";
}

}  // namespace

InstructionCount count_instructions(Workload& workload, const c10::Device& device, int steps,
                                    SlowdownInjector& injector, const std::string& mode) {
  if (mode == "off") return {.note = "--instructions off"};
  if (steps <= 0) return {.note = "no counted steps"};
  auto count = mode == "callgrind" ? count_with_callgrind(workload, device, steps, injector)
                                   : count_with_perf_event(workload, device, steps, injector);
  if (count.per_step) count.onednn_isa = onednn_isa_cap();
  return count;
}

InstructionCount counted_steps(const std::vector<std::uint64_t>& step_counts, std::string counter) {
  if (step_counts.empty()) return {.note = "no counted steps"};
  double sum = 0;
  for (const auto c : step_counts) sum += static_cast<double>(c);
  const double mean = sum / static_cast<double>(step_counts.size());
  InstructionCount out{.per_step = mean, .counter = std::move(counter)};
  if (step_counts.size() >= 2 && mean > 0) {
    const auto [low, high] = std::ranges::minmax(step_counts);
    out.spread = static_cast<double>(high - low) / mean;
  }
  return out;
}

std::optional<std::uint64_t> callgrind_total(std::istream& dump) {
  std::optional<std::uint64_t> summary;
  std::string line;
  while (std::getline(dump, line)) {
    const std::string_view view = line;
    if (view.starts_with("totals:")) return first_number(view.substr(7));
    if (view.starts_with("summary:") && !summary) summary = first_number(view.substr(8));
  }
  return summary;
}

std::string callgrind_trigger(std::istream& dump) {
  constexpr std::string_view kPrefix = "desc: Trigger: ";
  std::string line;
  while (std::getline(dump, line)) {
    if (line.starts_with(kPrefix)) return line.substr(kPrefix.size());
  }
  return "";
}

}  // namespace tipbench::detail
