#include "python_step.h"

#include "python_worker.h"
#include "tipbench/processes/child_runs.h"  // make_dirs
#include "tipbench/models/model_flops.h"
#include "tipbench/models/model.h"
#include "tipbench/models/model_file.h"
#include "tipbench/results/summary.h"
#include "training.h"  // TrainingSpec

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <ftw.h>
#include <limits.h>
#include <unistd.h>

namespace tipbench::suites {

namespace {

// python/tipbench_worker/__init__.py: PROTOCOL (2: the set_aside op).
constexpr int kWorkerProtocol = 2;

// Where workers' logs and Inductor caches go: $TMPDIR/tipbench-python-worker/. A log is removed
// with its workload unless the worker failed (the error names it). POSIX calls, not
// std::filesystem: libtorch.so exports its own copies, whose remove_all crashes.
std::string worker_root() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string root = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tipbench-python-worker";
  make_dirs(root);
  return root;
}

// rm -rf of a folder this workload made (it does not follow links).
void remove_tree(const std::string& dir) {
  ::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, FTW*) {
        std::remove(path);
        return 0;  // on to the next: what cannot be removed stays
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::string absolute_path(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

std::string unique_stem(const PythonStepSpec& spec) {
  static std::atomic<int> counter{0};
  std::string model;
  for (char ch : spec.model) model += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '-';
  return fmt::format("{}-{}-{}-{}", model.substr(0, 40), spec.compile.empty() ? "eager" : spec.compile, ::getpid(),
                     counter++);
}

std::string device_text(const c10::Device& device) {
  return device.is_cuda() ? fmt::format("cuda:{}", device.has_index() ? device.index() : 0) : "cpu";
}

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

class PythonStepWorkload final : public Workload {
 public:
  PythonStepWorkload(const SuiteContext& context, PythonStepSpec spec)
      : spec_(std::move(spec)), device_(context.device) {
    const std::string stem = unique_stem(spec_);
    const std::string root = worker_root();
    cache_dir_ = root + "/" + stem + ".inductor";
    image_size_ = models::resolved_image_size(spec_.model, {});
    classes_ = models::resolved_num_classes(spec_.model, {});
    prepare_ = {{"op", "prepare"},
                {"device", device_text(device_)},
                {"model", spec_.model},
                {"image_size", image_size_},
                {"classes", classes_},
                {"batch", spec_.batch_size},
                {"precision", precision_name(spec_.precision)},
                {"channels_last", spec_.channels_last},
                {"seed", static_cast<std::int64_t>(context.seed % (1ull << 62))},
                {"threads", at::get_num_threads()},
                {"compile", spec_.compile},
                {"numerics_steps", spec_.numerics_steps}};
    if (spec_.recipe) {
      const PythonLines& r = spec_.recipe->lines;
      prepare_["recipe"] = {{"setup", r.setup},
                            {"model", r.model},
                            {"optimizer_kwargs", r.optimizer_kwargs},
                            {"batch", r.batch},
                            {"autocast_dtype", r.autocast_dtype},
                            {"grad_scaler", r.grad_scaler}};
    }
    if (const auto* file = models::model_file(spec_.model)) {  // a user's model file, by its name
      prepare_["model_file"] = absolute_path(file->path);
      prepare_["model_file_format"] = file->format;
    }
    try {
      prepare_worker(root, stem);
    } catch (const ArmUnavailable&) {  // nothing failed: the reason says it all
      const std::string log = worker_ ? worker_->log_path() : root + "/" + stem + ".log";
      worker_.reset();
      remove_tree(cache_dir_);
      std::remove(log.c_str());
      throw;
    } catch (...) {  // the log stays, named by the error
      worker_.reset();
      remove_tree(cache_dir_);
      throw;
    }
  }

  ~PythonStepWorkload() override {
    const std::string log = worker_ ? worker_->log_path() : "";
    worker_.reset();
    remove_tree(cache_dir_);
    if (!failed_ && !log.empty()) std::remove(log.c_str());
  }

  void step() override { ask({{"op", "step"}}); }
  std::int64_t samples_per_step() const override { return spec_.batch_size; }
  // The worker keeps its model, optimizer state and compiled code: a compile is paid once per arm.
  bool keep_between_trials() const override { return true; }
  // Between its trials the worker hands its cached device memory back: this process's
  // empty_cache cannot reach another process's allocator, and the other arms' trials need it.
  // What the worker still holds is in no arm's held memory (docs/python-worker.md).
  void set_aside() override { ask({{"op", "set_aside"}}); }
  bool steps_run_elsewhere() const override { return true; }
  // reduce-overhead replays cudagraph trees from a private pool (the worker reports no allocated
  // peak for it either: timing.py, TrialMemory).
  bool memory_in_private_pool() const override { return spec_.compile == "reduce-overhead" && device_.is_cuda(); }

  StepsTimedElsewhere time_steps_elsewhere(int steps) override {
    const nlohmann::json reply = ask({{"op", "time"}, {"steps", steps}});
    StepsTimedElsewhere out;
    out.step_times_ms = reply.at("step_times_ms").get<std::vector<double>>();
    out.step_cpu_times_ms = reply.value("step_cpu_times_ms", std::vector<double>{});
    const auto& memory = reply.at("memory");
    const auto bytes = [&](const char* key) -> std::optional<std::int64_t> {
      if (memory.contains(key) && memory[key].is_number_integer()) return memory[key].get<std::int64_t>();
      return std::nullopt;
    };
    out.memory = {.peak_allocated_bytes = bytes("peak_allocated_bytes"),
                  .peak_reserved_bytes = bytes("peak_reserved_bytes"),
                  .timed_peak_allocated_bytes = bytes("timed_peak_allocated_bytes"),
                  .peak_rss_growth_bytes = bytes("peak_rss_growth_bytes")};
    if (reply.contains("graphs") && reply["graphs"].is_number_integer()) graphs_now_ = reply["graphs"].get<int>();
    return out;
  }

  // A compiled arm: the graphs compiled after its first step (recompiles), by the end of this trial.
  std::map<std::string, double> metrics() const override {
    if (spec_.compile.empty() || graphs_now_ < 0) return {};
    return {{"recompiles", std::max(0, graphs_now_ - compile_.value("graphs_after_first_step", graphs_now_))}};
  }

  nlohmann::json info() const override {
    nlohmann::json out = {{"model", spec_.model},
                          {"batch_size", spec_.batch_size},
                          {"image_size", image_size_},
                          {"channels_last", spec_.channels_last},
                          {"precision", precision_name(spec_.precision)},
                          {"input_shapes", "fixed"},
                          {"step", python_step_name(spec_)}};
    out.update(info_);  // parameters, optimizer, optimizer_impl, threads, python, torch
    if (!compile_.empty()) out["compile"] = compile_;
    if (const auto* flops = reference_flops(spec_.model, image_size_)) {
      out["training_flops_per_sample"] = flops->training_flops;
    }
    return out;
  }

  std::optional<std::string> invalid_reason() const override {
    if (compile_.empty()) return std::nullopt;
    const auto numerics = compile_.value("numerics", nlohmann::json::object());
    // `agrees` is null for a step that draws random numbers (not compared) and false when the
    // compiled step disagrees.
    const auto agrees = numerics.find("agrees");
    if (agrees == numerics.end() || (agrees->is_boolean() && !agrees->get<bool>())) {
      return fmt::format(
          "the compiled step disagrees with eager after {} steps: loss {} vs {}, gradient norm {} vs {} "
          "(largest relative difference {}, tolerance {})",
          numerics.value("steps", 0), numerics.value("loss_compiled", nlohmann::json()).dump(),
          numerics.value("loss_eager", nlohmann::json()).dump(),
          numerics.value("grad_norm_compiled", nlohmann::json()).dump(),
          numerics.value("grad_norm_eager", nlohmann::json()).dump(),
          numerics.value("max_relative_difference", nlohmann::json()).dump(),
          numerics.value("tolerance", nlohmann::json()).dump());
    }
    // reduce-overhead that Inductor ran without its CUDA graphs measured default mode's kernels.
    const int skips = compile_.value("cudagraph_skips", 0);
    if (spec_.compile == "reduce-overhead" && skips > 0) {
      return fmt::format(
          "Inductor skipped its CUDA graphs {} time(s): reduce-overhead ran as plain kernels (worker log "
          "says why)",
          skips);
    }
    const int breaks = compile_.value("graph_breaks", 0);
    if (spec_.max_graph_breaks >= 0 && breaks > spec_.max_graph_breaks) {
      return fmt::format("{} graph breaks, over the limit of {} ({})", breaks, spec_.max_graph_breaks,
                         compile_.value("graph_break_reasons", nlohmann::json::array()).dump());
    }
    return std::nullopt;
  }

 private:
  // Starts the arm's worker and prepares it (a compiled arm: the cold compile, then with
  // warm_compile a second worker over the same cache: the warm one, which runs the trials).
  void prepare_worker(const std::string& root, const std::string& stem) {
    nlohmann::json prepared = start(root + "/" + stem + ".log");
    if (!spec_.compile.empty()) {
      compile_ = prepared["info"].value("compile", nlohmann::json::object());
      compile_["cold_s"] = number_or(compile_, "compile_s", 0);
      if (spec_.warm_compile) {  // a second process over the same cache: what every later run pays
        worker_.reset();
        std::remove((root + "/" + stem + ".log").c_str());
        prepared = start(root + "/" + stem + ".warm.log");
        const auto warm = prepared["info"].value("compile", nlohmann::json::object());
        compile_["warm_s"] = number_or(warm, "compile_s", 0);
        for (const char* key :
             {"graphs", "graphs_after_first_step", "graph_breaks", "graph_break_reasons", "cudagraph_skips"}) {
          if (warm.contains(key)) compile_[key] = warm[key];
        }
      }
      compile_.erase("compile_s");
      compile_["mode"] = spec_.compile;
    }
    info_ = prepared["info"];
    info_.erase("compile");
    if (spec_.recipe) {
      info_["ingredients"] = spec_.recipe->ingredients;
      if (!spec_.recipe->not_applied.empty()) info_["not_applied"] = spec_.recipe->not_applied;
    }
  }

  // A worker over this arm's Inductor cache, said hello to and prepared; returns the prepare reply.
  nlohmann::json start(const std::string& log) {
    WorkerLaunch launch = worker_launch(log);
    for (const auto& [name, value] : spec_.environment) launch.environment[name] = value;
    launch.environment["TORCHINDUCTOR_CACHE_DIR"] = cache_dir_;
    launch.environment["TRITON_CACHE_DIR"] = cache_dir_ + "/triton";
    worker_ = std::make_unique<PythonWorker>(launch);
    const nlohmann::json hello = ask({{"op", "hello"}});
    if (hello.value("protocol", 0) != kWorkerProtocol) {
      failed_ = true;
      throw WorkerError(fmt::format("the worker speaks protocol {}, not {} (worker log {})", hello.value("protocol", 0),
                                    kWorkerProtocol, worker_->log_path()));
    }
    nlohmann::json prepared = ask(prepare_);
    prepared["info"]["torch"] = hello.value("torch", "");
    prepared["info"]["python"] = hello.value("python", "");
    return prepared;
  }

  nlohmann::json ask(const nlohmann::json& request) {
    try {
      return worker_->request(request, std::chrono::duration<double>(spec_.timeout_s));
    } catch (const WorkerError&) {
      failed_ = true;  // its log stays, named by the error
      throw;
    }
  }

  PythonStepSpec spec_;
  c10::Device device_;
  std::string cache_dir_;
  std::int64_t image_size_ = 0, classes_ = 0;
  nlohmann::json prepare_;
  std::unique_ptr<PythonWorker> worker_;
  nlohmann::json info_, compile_;
  int graphs_now_ = -1;
  bool failed_ = false;
};

}  // namespace

const SuiteOption kPythonTimeoutOption{.name = "python-timeout",
                                       .type = OptionType::number,
                                       .default_value = "1800",
                                       .help =
                                           "seconds the harness waits for any one answer of a Python worker "
                                           "(a cold compile is one) before it kills it and fails the arm",
                                       .min = 1,
                                       .max = 86400};

std::string python_step_name(const PythonStepSpec& spec) {
  if (spec.recipe) return "python_recipe";
  return spec.compile.empty() ? "python_eager" : fmt::format("torch.compile(mode={})", spec.compile);
}

std::unique_ptr<Workload> make_python_step_workload(const SuiteContext& context, const PythonStepSpec& spec) {
  return std::make_unique<PythonStepWorkload>(context, spec);
}

ArmSpec python_eager_arm(const ArmSpec& baseline) {
  ArmSpec arm{.name = "python_eager", .levels = baseline.levels};
  arm.levels.emplace_back("step", "python_eager");
  return arm;
}

bool is_python_eager_arm(const ArmSpec& arm) { return find_level(arm.levels, "step") == "python_eager"; }

std::unique_ptr<Workload> make_python_eager_workload(const SuiteContext& context, const TrainingSpec& spec) {
  if (spec.build_model || spec.optimizer || !spec.policies.empty()) {
    throw std::invalid_argument("python_eager runs PyTorch's default step only: no model variant, optimizer or policy");
  }
  return make_python_step_workload(context, {.model = spec.model,
                                             .batch_size = spec.batch_size,
                                             .precision = spec.precision,
                                             .channels_last = spec.model_options.channels_last,
                                             .timeout_s = kPythonTimeoutOption.number(context.options)});
}

std::optional<std::string> cpp_against_python_note(const CaseResult& c, const MeasureSettings& settings) {
  const ArmResult* python = find_arm(c, "python_eager");
  if (c.arms.empty() || python == nullptr || python->status != ArmStatus::ok || c.arms[0].status != ArmStatus::ok) {
    return std::nullopt;
  }
  const auto compared = compare_arms(c.arms[0], *python, trial_throughput(), settings);
  if (!compared) return std::nullopt;
  return fmt::format("{}: tipbench's C++ step ({}) against Python eager: {}", c.name, c.arms[0].arm,
                     comparison_words(*compared));
}

std::vector<std::string> cpp_against_python_notes(const SuiteResult& result, const MeasureSettings& settings) {
  std::vector<std::string> out;
  for (const auto& c : result.cases) {
    if (auto note = cpp_against_python_note(c, settings)) out.push_back(std::move(*note));
  }
  return out;
}

}  // namespace tipbench::suites
