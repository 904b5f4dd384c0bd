// `tipbench data make`: writes the dataloader suite's on-disk dataset of real JPEG files,
// deterministically, or reuses or completes one already there.
#include "cli/shared/cli_checks.h"
#include "cli/commands.h"

#include "tipbench/data/dataset.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/common/progress.h"
#include "tipbench/results/result.h"  // InputError

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

namespace tipbench::cli {

namespace {

struct MakeOptions {
  std::string out;
  std::int64_t images = data::DatasetSpec{}.images;
  std::string size = fmt::format("{}x{}", data::DatasetSpec{}.width, data::DatasetSpec{}.height);
  int classes = data::DatasetSpec{}.classes;
  std::uint64_t seed = 0;
  int quality = data::DatasetSpec{}.quality;
};

// "500x375" -> width, height; false when it does not parse.
bool parse_size(const std::string& text, int& width, int& height) {
  char x = 0, extra = 0;
  return std::sscanf(text.c_str(), "%d%c%d%c", &width, &x, &height, &extra) == 3 && (x == 'x' || x == 'X');
}

// Progress on stderr while files are written: one line rewritten in place on a terminal, a line
// every 10 s otherwise (CI logs). Nothing for a make that takes under a second.
std::function<void(std::int64_t, std::int64_t)> progress_printer() {
  const bool tty = Progress::stderr_is_tty();
  const auto started = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(started);
  return [tty, started, last](std::int64_t written, std::int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    const bool done = written >= total;
    if (!tty && !done && now - *last < std::chrono::seconds(10)) return;
    if (!tty && done && now - started < std::chrono::seconds(10)) return;  // short: the summary says it all
    *last = now;
    const double s = std::chrono::duration<double>(now - started).count();
    const double eta = written > 0 ? s * static_cast<double>(total - written) / static_cast<double>(written) : 0;
    fmt::print(stderr, "{}data make: {}/{} images ({:.1f}%), {:.0f} s, about {:.0f} s left{}", tty ? "\r" : "", written,
               total, 100.0 * static_cast<double>(written) / static_cast<double>(std::max<std::int64_t>(1, total)), s,
               eta, tty && !done ? "" : "\n");
    std::fflush(stderr);
  };
}

int make(const MakeOptions& o) {
  data::DatasetSpec spec;
  spec.images = o.images;
  spec.classes = o.classes;
  spec.seed = o.seed;
  spec.quality = o.quality;
  if (!parse_size(o.size, spec.width, spec.height)) {
    fmt::print(stderr, "error: --size {}: expected WIDTHxHEIGHT, e.g. 500x375\n", o.size);
    return exit_code::usage;
  }
  try {
    spec.validate();
    if (!output_dir_writable("--out", o.out)) return exit_code::usage;
    data::MakeOptions options;
    options.progress = progress_printer();
    const auto report = data::make_dataset(o.out, spec, options);
    if (report.stale_removed > 0) {
      fmt::print("removed {} temporary file(s) an interrupted make had left\n", report.stale_removed);
    }
    const double mb = static_cast<double>(report.manifest.total_bytes()) / (1 << 20);
    switch (report.outcome) {
      case data::MakeOutcome::reused:
        fmt::print("reused {}: complete ({}, {:.1f} MiB; checksums verified in {:.1f} s)\n", o.out, spec.describe(), mb,
                   report.seconds);
        break;
      case data::MakeOutcome::completed:
        fmt::print("completed {}: found a partial dataset ({}); wrote {} files ({}, {:.1f} MiB) in {:.1f} s\n", o.out,
                   report.partial, report.written, spec.describe(), mb, report.seconds);
        break;
      case data::MakeOutcome::made:
        fmt::print("made {}: {}, {:.1f} MiB of JPEG files in {:.1f} s\n", o.out, spec.describe(), mb, report.seconds);
        break;
    }
    return exit_code::ok;
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  } catch (const InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_code::usage;
  }
}

}  // namespace

Command add_data_command(CLI::App& app) {
  auto* sub = app.add_subcommand("data", "Make the dataloader suite's on-disk JPEG dataset");
  sub->require_subcommand(1, 1);
  auto* make_cmd = sub->add_subcommand(
      "make",
      "Write a deterministic ImageFolder-style dataset of JPEG files with a manifest; reuses a complete "
      "one, completes a partial one");
  auto o = std::make_shared<MakeOptions>();
  make_cmd->add_option("--out", o->out, "Dataset directory (created; its parents too)")
      ->required()
      ->check(not_a_flag());
  make_cmd->add_option("--images", o->images, "Number of images")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  make_cmd->add_option("--size", o->size, "Image size WIDTHxHEIGHT (ImageNet-like by default)")
      ->check(not_a_flag())
      ->capture_default_str();
  make_cmd->add_option("--classes", o->classes, "Number of classes")->check(CLI::Range(1, 1000))->capture_default_str();
  make_cmd->add_option("--seed", o->seed, "Seed: the same seed makes the same files")
      ->check(seed_value())
      ->capture_default_str();
  make_cmd->add_option("--quality", o->quality, "JPEG quality")->check(CLI::Range(1, 100))->capture_default_str();
  return {sub, [o] { return make(*o); }};
}

}  // namespace tipbench::cli
