// Shared by the launch tests (tests/distributed/test_*_cli.cpp): the tipbench binary run as a rank
// or a launcher in a child process, the quick data_parallel command they run, the checks of its
// 2-rank result, free ports and this machine's address.
//   const auto o = launch::run(launch::quick_run(dir / "r.json"), dir, {{"RANK", "0"}, ...});
#pragma once

#include "child_process.h"
#include "test_paths.h"
#include "tipbench/results/levels.h"
#include "tipbench/results/result.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#ifndef TIPBENCH_BINARY
#error "TIPBENCH_BINARY must name the tipbench executable (tests/distributed/CMakeLists.txt)"
#endif

namespace tipbench::testing::launch {

struct Outcome {
  int code = -1;
  double seconds = 0;
  std::string err;
};

// Runs `args` with extra environment variables; stdout and stderr go to files in `dir`.
inline Outcome run(std::vector<std::string> args, const std::filesystem::path& dir,
                   const std::map<std::string, std::string>& extra = {}) {
  const auto child = run_child(args, dir / "stdout.txt", dir / "stderr.txt", extra);
  return {.code = child.code, .seconds = child.seconds, .err = child.err};
}

inline std::vector<std::string> quick_run(const std::filesystem::path& out) {
  return {TIPBENCH_BINARY, "run",  "--suite", "data_parallel", "--quick", "--blocks", "3",
          "--bucket-mb",   "0.25", "--out",   out.string()};
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A port nothing listens on (the kernel picked it, then it was closed).
inline std::string unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

// An IPv4 address of this machine that is not loopback (an interface that is up), or "".
inline std::string non_loopback_address() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return "";
  std::string out;
  for (const ifaddrs* a = all; a != nullptr && out.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_UP) == 0 ||
        (a->ifa_flags & IFF_LOOPBACK) != 0) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text)) != nullptr) out = text;
  }
  ::freeifaddrs(all);
  return out;
}

// Checks a 2-rank result: the ddp arms ran with both ranks and carry rank 1's measurements.
inline void expect_two_rank_result(const std::filesystem::path& path, const std::string& launcher, int nodes = 1) {
  const auto result = tipbench::read_result(path.string());
  ASSERT_EQ(result.suites.size(), 1u);
  const auto& suite = result.suites[0];
  ASSERT_EQ(suite.cases.size(), 1u);
  const auto& c = suite.cases[0];
  EXPECT_EQ(tipbench::level(c.params, "ranks"), "2");
  for (const auto& arm : c.arms) {
    SCOPED_TRACE(arm.arm);
    if (arm.arm == "dp") {
      EXPECT_EQ(arm.status, tipbench::ArmStatus::skipped);
      EXPECT_TRUE(contains(arm.reason, "GPU")) << arm.reason;
      continue;
    }
    ASSERT_EQ(arm.status, tipbench::ArmStatus::ok) << arm.reason;
    EXPECT_EQ(arm.trials.size(), 3u);
    if (arm.arm == "single") continue;
    EXPECT_EQ(arm.info.value("world_size", 0), 2);
    EXPECT_EQ(arm.info.value("backend", ""), "gloo");
    EXPECT_EQ(arm.info.value("launcher", ""), launcher);
    EXPECT_EQ(arm.info.value("nodes", 0), nodes);
    EXPECT_EQ(arm.info.value("ranks_per_node", nlohmann::json()),
              nodes == 1 ? nlohmann::json({2}) : nlohmann::json({1, 1}));
    EXPECT_TRUE(contains(arm.info.value("transport", ""), "gloo: ")) << arm.info.dump();
    EXPECT_EQ(arm.info.value("ddp", ""), "c10d::Reducer");
    // 0.25 MB buckets: several, rebuilt from the first backward; without overlap, one.
    if (arm.arm == "ddp") {
      EXPECT_GT(arm.info.value("buckets", 0), 1);
    } else {
      EXPECT_EQ(arm.info.value("buckets", 0), 1);
    }
    EXPECT_EQ(arm.trials[0].samples_per_step, 2 * std::stoll(tipbench::level(c.params, "batch")));
    for (const auto* key : {"rank0_step_ms", "rank1_step_ms", "rank1_comm_share", "rank1_peak_memory_mb", "comm_share",
                            "comm_share_max"}) {
      ASSERT_TRUE(arm.metrics.count(key)) << key;
    }
    EXPECT_GT(arm.metrics.at("rank1_step_ms").median, 0);
    EXPECT_GT(arm.metrics.at("rank1_peak_memory_mb").median, 0);
    EXPECT_GE(arm.metrics.at("comm_share").median, 0);
    EXPECT_LE(arm.metrics.at("comm_share_max").median, 1);
  }
  bool efficiency_note = false;
  const std::string over = "over 2 rank(s) on " + std::to_string(nodes) + " node(s)";
  for (const auto& n : suite.notes)
    efficiency_note = efficiency_note || (contains(n, "scaling efficiency") && contains(n, over));
  EXPECT_TRUE(efficiency_note);
}

}  // namespace tipbench::testing::launch
