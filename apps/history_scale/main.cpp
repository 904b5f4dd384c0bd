// tipbench_history_scale: how long the history store takes to ingest many runs and `history
// detect` to read and judge many long series, on SQLite or PostgreSQL. A benchmark, not a test:
// it prints the figures docs/history.md quotes.
//   tipbench_history_scale --store /tmp/scale.db --runs 500 --cases 2500 --blocks 1
// Each run holds cases x 2 arms x 2 metrics (throughput, memory) series; the store must be new.
#include "tipbench/history/detect.h"
#include "tipbench/history/store.h"
#include "tipbench/history/trends.h"
#include "tipbench/results/result.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A nightly run of `cases` cases of one suite, two arms each, `blocks` blocks, a 5% slowdown from
// run `step_at` on in every tenth case (so detect has something to find).
tipbench::Result nightly_run(int night, int cases, int blocks, int step_at, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, 0.02);
  tipbench::Result r;
  r.context.tipbench_version = "0.1.0";
  r.context.timestamp_utc = fmt::format("2026-01-01T00:00:00Z");
  r.context.timestamp_utc.replace(
      0, 10, fmt::format("{:04}-{:02}-{:02}", 2026 + night / 360, night / 30 % 12 + 1, night % 30 + 1));
  r.context.hostname = "scale";
  r.context.device = "cpu";
  r.context.fingerprint.cpu_model = "Scale CPU";
  r.context.fingerprint.cpu_cores = 2;
  r.context.fingerprint.libtorch_version = "2.11.0";
  r.context.fingerprint_slug = tipbench::fingerprint_slug(r.context.fingerprint);
  r.context.git.sha = fmt::format("{:040x}", night);
  r.context.settings.blocks = blocks;
  tipbench::SuiteResult suite{"zero_grad", "scale", "in_process", {}, {}, {}};
  for (int ci = 0; ci < cases; ++ci) {
    tipbench::CaseResult c;
    c.name = fmt::format("zero_grad/model:m{}/batch:8", ci);
    c.params = {{"model", fmt::format("m{}", ci)}, {"batch", "8"}};
    const double level = (ci % 10 == 0 && night >= step_at) ? 0.95 : 1.0;
    for (const std::string arm : {"base", "treat"}) {
      tipbench::ArmResult a;
      a.name = c.name + "/arm:" + arm;
      a.arm = arm;
      a.baseline = arm == "base";
      a.levels = {{"knob", arm}};
      for (int b = 0; b < blocks; ++b) {
        tipbench::Trial t;
        t.block = b;
        t.samples_per_step = 8;
        t.throughput_samples_per_s = 1000 * level * (1 + noise(rng));
        t.step_times_ms = {8000.0 / t.throughput_samples_per_s};
        t.memory.peak_rss_growth_bytes = 1 << 20;
        a.trials.push_back(t);
      }
      c.arms.push_back(std::move(a));
    }
    tipbench::summarize_case(c, r.context.settings);
    suite.cases.push_back(std::move(c));
  }
  r.suites.push_back(std::move(suite));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string store_path;
  int runs = 100, cases = 100, blocks = 3, repeats = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--store") store_path = argv[i + 1];
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--cases") cases = std::atoi(argv[i + 1]);
    if (flag == "--blocks") blocks = std::atoi(argv[i + 1]);
    if (flag == "--repeats") repeats = std::atoi(argv[i + 1]);
  }
  if (store_path.empty() || runs < 10 || cases < 1 || blocks < 1 || repeats < 1 || argc % 2 == 0) {
    fmt::print(stderr,
               "usage: tipbench_history_scale --store PATH|postgresql://... [--runs N] [--cases C] [--blocks B] "
               "[--repeats R]\n");
    return 2;
  }
  try {
    tipbench::history::HistoryStore store(store_path);
    std::mt19937_64 rng(1);
    double ingest_s = 0;
    std::size_t samples = 0;
    for (int night = 0; night < runs; ++night) {
      const auto run = nightly_run(night, cases, blocks, runs - runs / 5, rng);
      const std::string bytes = tipbench::to_json_document(run).dump();
      const auto t0 = Clock::now();
      samples += store.ingest(bytes, run, fmt::format("night{}.json", night)).samples;
      ingest_s += seconds_since(t0);
    }
    fmt::print(
        "store {}: {} runs of {} series x {} blocks ingested in {:.1f} s ({:.1f} ms per run, {:.0f} samples/s)\n",
        store_path, runs, 4 * cases, blocks, ingest_s, 1000 * ingest_s / runs, samples / ingest_s);
    // Each repeat opens the store afresh, as a `history detect` process does (no cached runs).
    std::vector<double> detect_s, read_s;
    tipbench::history::DetectReport report;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = Clock::now();
      report = tipbench::history::detect(tipbench::history::HistoryStore(store_path), {});
      detect_s.push_back(seconds_since(t0));
      const auto t1 = Clock::now();
      const auto trends = tipbench::history::read_trends(tipbench::history::HistoryStore(store_path), "");
      read_s.push_back(seconds_since(t1));
    }
    const auto summary = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      if (v.size() == 1) return fmt::format("{:.1f} s", v[0]);
      return fmt::format("{:.1f} s (median of {}, {:.1f}-{:.1f})", v[v.size() / 2], v.size(), v.front(), v.back());
    };
    fmt::print(
        "detect: {} series x {} runs in {} (reading the series alone: {}); {} change points, {} new "
        "regressions (planted: {} series)\n",
        report.series, runs, summary(detect_s), summary(read_s), report.changes.size(), report.new_regressions(),
        2 * ((cases + 9) / 10));
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 4;
  }
  return 0;
}
