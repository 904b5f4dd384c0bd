// Tip: try another host memory allocator. LibTorch's CPU tensors, the data loader's decode
// buffers and every small host object go through malloc; glibc's allocator returns memory to
// the system eagerly and contends across threads, while jemalloc and tcmalloc keep per-thread
// caches. Swapping one in is one environment variable: LD_PRELOAD=libjemalloc.so.2.
// Baseline: glibc's malloc (LD_PRELOAD cleared). Treatments: jemalloc, tcmalloc (the minimal
// build: no heap profiler). An allocator is chosen when a process starts, so every trial runs in
// a fresh process started with the arm's LD_PRELOAD, and the trial asks the library that serves
// malloc which allocator it is (jemalloc's mallctl("version"), tcmalloc's tc_version): an arm
// whose allocator does not serve malloc there is skipped with the reason, and so is an allocator
// whose library is not installed (Debian: libjemalloc2, libtcmalloc-minimal4; scripts/bootstrap.sh
// installs both). Two workloads: a training step, and the data loader alone (workers = cores,
// JPEG decode + augmentation, the dataloader suite's on-disk dataset). --quick: the training
// step, glibc vs jemalloc (a fresh process per trial is the quick suite's dearest arm).
// Memory is the peak growth of the resident set, which every allocator's pages count in.
#include "common/loader_workload.h"
#include "allocator/malloc_provider.h"
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/data/dataset.h"
#include "tipbench/data/system.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace tipbench::suites {

namespace {

struct AllocatorLibrary {
  const char* arm;
  std::vector<const char*> files;  // sonames, the first found wins
  const char* debian_package;
};

const std::vector<AllocatorLibrary>& allocator_libraries() {
  static const std::vector<AllocatorLibrary> libraries = {
      {"jemalloc", {"libjemalloc.so.2", "libjemalloc.so"}, "libjemalloc2"},
      {"tcmalloc", {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"}, "libtcmalloc-minimal4"},
  };
  return libraries;
}

const AllocatorLibrary* library_of(const std::string& arm) {
  for (const auto& lib : allocator_libraries()) {
    if (arm == lib.arm) return &lib;
  }
  return nullptr;  // glibc
}

// lib/ beside the binary's directory (the device bundle ships both allocators there), then
// LD_LIBRARY_PATH's directories, then the system's.
std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((self.parent_path().parent_path() / "lib").string());
  if (const char* path = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"}) dirs.push_back(dir);
  return dirs;
}

std::optional<std::string> find_library(const AllocatorLibrary& lib) {
  for (const auto& dir : search_dirs()) {
    for (const char* file : lib.files) {
      std::error_code ec;
      const auto path = std::filesystem::path(dir) / file;
      if (std::filesystem::is_regular_file(path, ec)) return path.string();
    }
  }
  return std::nullopt;
}

// The arm's allocator must be the one serving malloc in this (the trial's) process, as the
// allocator itself reports (malloc_provider): a preload that was ignored, or a library that is
// only named like the allocator, would measure glibc under another name. ArmUnavailable: the
// arm is then skipped with the reason.
MallocProvider check_provider(const std::string& arm) {
  const MallocProvider p = malloc_provider();
  const AllocatorLibrary* lib = library_of(arm);
  if (lib == nullptr) {
    if (p.kind != "glibc") {
      throw ArmUnavailable(fmt::format("the glibc arm runs with malloc served by {} ({})", p.library, p.kind));
    }
    return p;
  }
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string wanted = preload != nullptr ? preload : "";
  if (p.kind != arm) {
    throw ArmUnavailable(fmt::format(
        "{}: LD_PRELOAD={} is set, but malloc is served by {}, which reports itself as {} (a library named like {} "
        "that is something else, or a preload the loader ignored)",
        arm, wanted.empty() ? "(nothing)" : wanted, p.library, p.kind, arm));
  }
  return p;
}

std::int64_t loader_batch(const SuiteContext& context) {
  if (context.batch_size <= 0 && context.quick && !context.device.is_cuda()) return 8;
  return batch_size_for(context, models_to_run(context).front());
}

}  // namespace

class Allocator final : public Suite {
 public:
  std::string name() const override { return "allocator"; }
  std::string description() const override {
    return "host allocator: glibc malloc (default) vs jemalloc vs tcmalloc via LD_PRELOAD, each trial in a fresh "
           "process: a training step and the data loader";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"003", "jemalloc / tcmalloc: fewer fragmentation stalls on the host"};
  }
  Isolation isolation(const SuiteContext&) const override { return Isolation::fresh_process; }
  std::map<std::string, std::string> trial_environment(const SuiteContext&, const CaseSpec&,
                                                       const ArmSpec& arm) const override {
    const AllocatorLibrary* lib = library_of(arm.name);
    if (lib == nullptr) return {{"LD_PRELOAD", ""}};
    const auto path = find_library(*lib);
    return {{"LD_PRELOAD", path.value_or("")}};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> arms{{"glibc", {{"allocator", "glibc"}}}};
    for (const auto& lib : allocator_libraries()) {
      if (!context.quick || lib.arm == std::string("jemalloc")) arms.push_back({lib.arm, {{"allocator", lib.arm}}});
    }
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      Levels params{{"workload", "training"}};
      for (const auto& p : training_params(context, model)) params.push_back(p);
      out.push_back({params, arms});
    }
    if (!context.quick) {
      const int workers = data::available_cores();
      out.push_back({{{"workload", "loader"},
                      {"batch", std::to_string(loader_batch(context))},
                      {"workers", std::to_string(workers)}},
                     arms});
    }
    return out;
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec&, const ArmSpec& arm) const override {
    const AllocatorLibrary* lib = library_of(arm.name);
    if (lib == nullptr || find_library(*lib)) return std::nullopt;
    std::vector<std::string> dirs = search_dirs();
    return fmt::format("{} is not installed: no {} in {} (Debian: apt install {})", lib->arm, lib->files.front(),
                       fmt::join(dirs, ", "), lib->debian_package);
  }
  void prepare_run(const SuiteContext& context) const override {
    if (!context.quick) cached_dataset(context, name());
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const MallocProvider provider = check_provider(arm.name);
    nlohmann::json info = {
        {"allocator", arm.name}, {"allocator_library", provider.library}, {"allocator_version", provider.version}};
    if (level(c.params, "workload") == "training") {
      return with_info(make_training_workload(context, training_spec(c)), std::move(info));
    }
    const std::string dir = cached_dataset_dir(context);
    data::Manifest manifest = data::read_manifest(dir);
    LoaderWorkloadSpec spec;
    spec.batch_size = level_int(c.params, "batch");
    spec.loader.workers = static_cast<int>(level_int(c.params, "workers"));
    spec.loader.seed = context.seed;
    spec.loader.augment.output_size = models::resolved_image_size(models_to_run(context).front(), {});
    return with_info(make_loader_workload(context, spec, std::move(manifest), dir), std::move(info));
  }
};

TIPBENCH_REGISTER_SUITE(Allocator);

namespace {
// An allocator is chosen when a process starts: a recipe holding one runs every trial in a fresh
// process with the library preloaded, and the trial checks, as the suite's own arm does, that it
// really serves malloc (else the arm is skipped with the reason).
Ingredient preloaded(const AllocatorLibrary& lib) {
  const std::string arm = lib.arm;
  return {.tip = "allocator",
          .arm = arm,
          .alone_case = {{"workload", "training"}},
          .python = {.comments = {fmt::format("start Python with LD_PRELOAD set to {} (Debian: {}): a process "
                                              "chooses its allocator when it starts, so no line of the script can",
                                              lib.files.front(), lib.debian_package)}},
          .environment = [arm](const SuiteContext&) -> std::map<std::string, std::string> {
            return {{"LD_PRELOAD", find_library(*library_of(arm)).value_or("")}};
          },
          .apply = [arm](const SuiteContext&, TrainingSpec&) -> Restore {
            check_provider(arm);
            return {};
          }};
}

[[maybe_unused]] const bool kAllocatorIngredients = [] {
  for (const auto& lib : allocator_libraries()) register_ingredient(preloaded(lib));
  return true;
}();
}  // namespace

}  // namespace tipbench::suites
