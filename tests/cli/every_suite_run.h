// One quick run of every registered suite (`run --quick --blocks 3`, the real binary), made once
// per build of the binary and read by the tests that need one: CliBinary checks it end to end and
// AdviseCli advises from it (`advise --from`). ctest runs CliBinary's test first (FIXTURES_SETUP in
// tests/cli/CMakeLists.txt), so no test waits on another's run; run by hand, whichever test comes
// first makes it (generated_once.h: keyed by the binary's bytes, so a rebuild makes it again).
// The run writes over an older file at its --out, which it must replace.
//   const auto& run = every_suite_run();
//   ASSERT_TRUE(run.error.empty()) << run.error;
//   tipbench::read_result(run.result.string());
#pragma once

#include "generated_once.h"
#include "running_child.h"
#include "test_paths.h"

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>

namespace tipbench::testing {

struct EverySuiteRun {
  std::filesystem::path result;  // the run's --out
  std::string stdout_text;       // what the run printed
  std::string listing;           // the names in the --out folder once it ended, one per line
  std::string error;             // why there is no run ("" when there is)
};

inline const EverySuiteRun& every_suite_run() {
  static EverySuiteRun run;
  static std::once_flag once;
  std::call_once(once, [] {
    namespace fs = std::filesystem;
    const auto made = generated_once("every_suite_run", read_bytes(TIPBENCH_BINARY), [](const fs::path& into) {
      fs::create_directories(into / "run");
      fs::create_directories(into / "logs");
      const fs::path out = into / "run" / "all.json";
      write_bytes(out, "an older file that the run replaces\n");
      // --blocks 3: the fewest that still give comparisons. One intra-op thread: beside another
      // test (ctest -j2 on 2 cores), two threads wait on each other's OpenMP barrier.
      RunningChild child({TIPBENCH_BINARY, "run", "--quick", "--blocks", "3", "--out", out.string()}, into / "logs",
                         {{"OMP_NUM_THREADS", "1"}});
      if (!child.started()) return std::string("cannot start ") + TIPBENCH_BINARY;
      // Under ctest's 900 s limit.
      if (!child.wait(std::chrono::seconds(840))) return "the run timed out\n" + child.describe();
      if (!child.exited() || child.exit_code() != 0) return "the run failed\n" + child.describe();
      std::string listing;
      for (const auto& name : list_dir(into / "run")) listing += name + "\n";
      write_bytes(into / "listing.txt", listing);
      write_bytes(into / "stdout.txt", child.stdout_text());
      write_bytes(into / "done", "");
      return std::string();
    });
    run.error = made.error;
    run.result = made.dir / "run" / "all.json";
    run.stdout_text = read_bytes(made.dir / "stdout.txt");
    run.listing = read_bytes(made.dir / "listing.txt");
  });
  return run;
}

}  // namespace tipbench::testing
