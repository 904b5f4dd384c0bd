#include "distributed/rank_exit.h"

#include "distributed/rendezvous_store.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace tipbench::distributed {

void exit_failed(int rank, const std::string& message) {
  fmt::print(stderr, "error: rank {}: {}; exiting without writing a result\n", rank, message);
  std::fflush(stderr);
  // No destructors: a process group with a dead peer may block in its own teardown.
  std::_Exit(exit_code::failed);
}

void exit_lost_store(const RankEnv& env, const std::exception& e) {
  exit_failed(env.rank, fmt::format("lost the rendezvous store hosted by {} ({}:{}): {}", store_host(env),
                                    env.master_addr, env.master_port, error_summary(e)));
}

}  // namespace tipbench::distributed
