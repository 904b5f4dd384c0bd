// `tipbench run --nproc N`: this process becomes the launcher of N local ranks. It hosts the
// rendezvous store itself (on a free port, so no port can collide), starts N copies of the same
// command with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
// TIPBENCH_LAUNCHER set, and reaps them. When a rank fails, the others are stopped and the rank
// is named. Example:
//   return tipbench::distributed::launch_local_ranks({.executable = self, .argv = argv, .nproc = 2});
#pragma once

#include <string>
#include <vector>

namespace tipbench::distributed {

struct LaunchSpec {
  std::string executable;         // the binary every rank runs (this one)
  std::vector<std::string> argv;  // its arguments, argv[0] included
  int nproc = 1;
  double grace_s = 5;  // how long the others may take to exit before SIGKILL
};

// Returns the exit code: rank 0's when every rank ended by itself (rank 0 wrote the result),
// else non-zero after naming the first rank that failed.
int launch_local_ranks(const LaunchSpec& spec);

// A short description of a wait status: "exited with code 3", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace tipbench::distributed
