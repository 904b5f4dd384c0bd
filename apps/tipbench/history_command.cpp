// `tipbench history ingest RUN.json... | runs`: the history store (docs/history.md).
#include "tipbench/commands.h"

#include "cli_checks.h"
#include "tipbench/error_text.h"
#include "tipbench/exit_codes.h"
#include "tipbench/history/store.h"
#include "tipbench/result.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

namespace tipbench::cli {

namespace {

struct HistoryFlags {
  std::string store;  // "" until resolved: --store, $TIPBENCH_HISTORY_STORE, results/history.db
  std::vector<std::string> runs;
};

std::string store_path(const HistoryFlags& f) {
  if (!f.store.empty()) return f.store;
  if (const char* env = std::getenv("TIPBENCH_HISTORY_STORE"); env && *env) return env;
  return "results/history.db";
}

// Opens the store, creating its folder; nullopt after saying why (exit 2).
std::unique_ptr<history::HistoryStore> open_store(const std::string& path) {
  try {
    const auto folder = std::filesystem::absolute(path).parent_path();
    std::filesystem::create_directories(folder);
    return std::make_unique<history::HistoryStore>(path);
  } catch (const history::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}: cannot open the history store: {}\n", path, error_summary(e));
  }
  return nullptr;
}

int ingest(const HistoryFlags& f) {
  // Every file is checked before any is stored: a bad one in the list stores nothing.
  for (const auto& path : f.runs) {
    try {
      (void)read_result(path);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}; nothing was ingested\n", error_summary(e));
      return exit_code::usage;
    }
  }
  const std::string path = store_path(f);
  auto store = open_store(path);
  if (!store) return exit_code::usage;
  std::size_t stored = 0;
  for (const auto& run : f.runs) {
    try {
      const auto o = store->ingest(run);
      stored += !o.already_stored;
      if (o.already_stored) {
        fmt::print("{}: already stored (run {}, sha256 {})\n", run, o.run_id, o.sha256.substr(0, 12));
      } else {
        fmt::print("{}: stored as run {}: {} series, {} samples\n", run, o.run_id, o.cells, o.samples);
      }
    } catch (const history::StoreError& e) {
      fmt::print(stderr, "error: {} (the runs before it are stored)\n", e.what());
      return exit_code::internal;
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}: {} (the runs before it are stored)\n", run, error_summary(e));
      return exit_code::internal;
    }
  }
  fmt::print("{} new of {} in {}\n", stored, f.runs.size(), path);
  return exit_code::ok;
}

int list_runs(const HistoryFlags& f) {
  const std::string path = store_path(f);
  if (!std::filesystem::exists(path)) {
    fmt::print(stderr, "error: {}: no history store there (tipbench history ingest RUN.json makes one)\n", path);
    return exit_code::usage;
  }
  auto store = open_store(path);
  if (!store) return exit_code::usage;
  try {
    const auto runs = store->runs();
    if (runs.empty()) fmt::print("no runs in {}\n", path);
    for (const auto& r : runs) {
      fmt::print("{:>5}  {}  {}  {}  git {}  {} samples  sha256 {}\n", r.id, r.timestamp_utc, r.fingerprint_slug,
                 r.device, r.git_sha.empty() ? "-" : r.git_sha.substr(0, 12), r.samples, r.sha256.substr(0, 12));
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", error_summary(e));
    return exit_code::internal;
  }
  return exit_code::ok;
}

}  // namespace

Command add_history_command(CLI::App& app) {
  auto* sub = app.add_subcommand("history", "Keep every run in a history store (SQLite) and list it (docs/history.md)");
  sub->require_subcommand(1, 1);
  auto f = std::make_shared<HistoryFlags>();
  sub->add_option("--store", f->store,
                  "The store: a SQLite file (default $TIPBENCH_HISTORY_STORE, else results/history.db; made when "
                  "absent)")
      ->check(not_a_flag());
  auto* ingest_cmd = sub->add_subcommand(
      "ingest", "Store result files, each once (by its SHA-256) and atomically, with every block's sample");
  ingest_cmd->add_option("runs", f->runs, "Result files")->required()->check(CLI::ExistingFile);
  auto* runs_cmd = sub->add_subcommand("runs", "List the stored runs, oldest first");
  return {sub, [f, ingest_cmd, runs_cmd] {
            if (ingest_cmd->parsed()) return ingest(*f);
            if (runs_cmd->parsed()) return list_runs(*f);
            return exit_code::usage;
          }};
}

}  // namespace tipbench::cli
