// Headless Chromium for the tests that check a page in a real browser (Debian's `chromium`,
// installed by scripts/bootstrap.sh --test; $TIPBENCH_CHROMIUM names another).
//   const auto chromium = tipbench::testing::find_chromium();      // "" when absent: skip
//   auto args = tipbench::testing::chromium_args(chromium, dir / "profile", "1200,4000");
//   args.insert(args.end(), {"--dump-dom", "file://" + page});
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace tipbench::testing {

inline std::string find_chromium() {
  if (const char* env = std::getenv("TIPBENCH_CHROMIUM"); env && *env) return env;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// The command line up to the action (--dump-dom, --screenshot): headless, no GPU, no sandbox (the
// tests run as root in CI), a fresh profile, bounded by timeout(1) at 120 s.
inline std::vector<std::string> chromium_args(const std::string& chromium, const std::filesystem::path& profile,
                                              const std::string& window_size) {
  return {"/usr/bin/timeout",
          "120",
          chromium,
          "--headless",
          "--disable-gpu",
          "--no-sandbox",
          "--hide-scrollbars",
          "--user-data-dir=" + profile.string(),
          "--window-size=" + window_size};
}

}  // namespace tipbench::testing
