// How a rank leaves a run it cannot finish: one line on stderr that names this rank and why, then
// exit_code::failed at once, so no result is written. Example:
//   exit_failed(env.rank, "rank 2 stopped responding (no heartbeat for 11 s): it died or hangs");
//   catch (const std::exception& e) { exit_lost_store(env, e); }
#pragma once

#include "distributed/rank_env.h"

#include <exception>
#include <string>

namespace tipbench::distributed {

// "error: rank R: MESSAGE; exiting without writing a result", and exit.
[[noreturn]] void exit_failed(int rank, const std::string& message);

// The store stopped answering: names who hosts it ("lost the rendezvous store hosted by rank 0
// (ADDR:PORT): ..."), and exits.
[[noreturn]] void exit_lost_store(const RankEnv& env, const std::exception& e);

}  // namespace tipbench::distributed
