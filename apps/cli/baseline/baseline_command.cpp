// `tipbench baseline save|list|find`: stored baselines under results/baselines/<slug>/<name>.json.
#include "cli/commands.h"

#include "cli/shared/cli_checks.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/machine/collect_fingerprint.h"
#include "tipbench/gate/baseline_store.h"
#include "tipbench/results/result.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include <memory>
#include <optional>

namespace tipbench::cli {

namespace {

struct BaselineFlags {
  std::string dir = "results/baselines";
  std::string run;
  std::string name = "baseline";
  bool force = false;
  std::string slug;
  bool cpu = false;
  std::vector<std::string> suites;  // find: prefer a baseline holding these
};

int save(const BaselineFlags& f) {
  if (!output_dir_writable("--dir", f.dir)) return exit_code::usage;
  try {
    const std::string path = gate::save_baseline(f.run, f.dir, f.name, f.force);
    fmt::print("stored {} as {}\n", f.run, path);
    return exit_code::ok;
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot store the baseline: {}\n", error_summary(e));
    return exit_code::internal;
  }
}

std::string this_machine_slug(bool cpu_only) {
  return fingerprint_slug(collect_fingerprint(!cpu_only && torch::cuda::is_available()));
}

// --dir for reading: "" or a file is a usage error, not an empty store.
bool store_readable(const BaselineFlags& f) {
  if (const auto why = gate::store_dir_problem(f.dir)) {
    fmt::print(stderr, "error: --dir: {}\n", *why);
    return false;
  }
  return true;
}

int list(const BaselineFlags& f) {
  if (!store_readable(f)) return exit_code::usage;
  std::vector<std::string> unreadable;
  const auto all = gate::list_baselines(f.dir, &unreadable);
  const std::string here = this_machine_slug(false);
  const std::string here_cpu = this_machine_slug(true);
  if (all.empty()) fmt::print("no baselines in {}\n", f.dir);
  for (const auto& b : all) {
    const bool mine = b.slug == here || b.slug == here_cpu;
    fmt::print("{}{}  {}  {}  {}  git {}  suites: {}\n", b.slug, mine ? " (this machine)" : "", b.name, b.timestamp_utc,
               b.device, b.git_sha.empty() ? "-" : b.git_sha.substr(0, 12), fmt::join(b.suites, ", "));
    fmt::print("    {}\n", b.path);
  }
  for (const auto& u : unreadable) fmt::print(stderr, "warning: unreadable baseline: {}\n", u);
  return exit_code::ok;
}

int find(const BaselineFlags& f, bool slug_given) {
  if (!store_readable(f)) return exit_code::usage;
  if (slug_given) {
    if (const auto why = gate::slug_problem(f.slug)) {
      fmt::print(stderr, "error: --slug {}\n", *why);
      return exit_code::usage;
    }
  }
  const std::string slug = slug_given ? f.slug : this_machine_slug(f.cpu);
  std::optional<gate::StoredBaseline> b;
  try {
    b = gate::find_baseline(f.dir, slug, f.suites);
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
  if (b) {
    fmt::print("{}\n", b->path);
    return exit_code::ok;
  }
  fmt::print(stderr, "no stored baseline for {} in {}\n", slug, f.dir);
  return exit_code::inconclusive;
}

}  // namespace

Command add_baseline_command(CLI::App& app) {
  auto* sub =
      app.add_subcommand("baseline", "Store, list and find baselines (results/baselines/<fingerprint>/<name>.json)");
  sub->require_subcommand(1, 1);
  auto f = std::make_shared<BaselineFlags>();
  sub->add_option("--dir", f->dir, "Baselines directory")->check(not_a_flag())->capture_default_str();
  auto* save_cmd = sub->add_subcommand("save", "Store a run as the baseline for its fingerprint");
  save_cmd->add_option("run", f->run, "Result file")->required()->check(CLI::ExistingFile);
  save_cmd->add_option("--name", f->name, "Baseline name (file name without .json): [a-z0-9._-], at most 100 bytes")
      ->check(not_a_flag())
      ->capture_default_str();
  save_cmd->add_flag("--force", f->force, "Replace an existing baseline of that name");
  auto* list_cmd = sub->add_subcommand("list", "List stored baselines");
  auto* find_cmd =
      sub->add_subcommand("find", "Print the stored baseline for this machine's fingerprint (exit 3 if none)");
  find_cmd
      ->add_option("--slug", f->slug,
                   "Look up this fingerprint slug instead of this machine's: [a-z0-9._-], at most 200 bytes")
      ->check(not_a_flag());
  find_cmd->add_flag("--cpu", f->cpu, "This machine's fingerprint as a CPU run records it");
  find_cmd
      ->add_option("--suite", f->suites,
                   "Prefer the newest baseline that holds this suite (repeatable), as gate --baseline auto does for "
                   "its run's suites")
      ->check(not_a_flag());
  return {sub, [f, save_cmd, list_cmd, find_cmd] {
            if (save_cmd->parsed()) return save(*f);
            if (list_cmd->parsed()) return list(*f);
            if (find_cmd->parsed()) return find(*f, find_cmd->count("--slug") > 0);
            return exit_code::usage;
          }};
}

}  // namespace tipbench::cli
