// What a run says when SIGINT or SIGTERM stops it: the last notice set (e.g. "interrupted: 3
// cases kept in x.json.partial ..."), written from the signal handler, after which the process
// dies of the same signal (a shell then reports 128 + N). Example:
//   tipbench::install_interrupt_notice("interrupted: no case had finished; nothing kept");
//   ... after each case: tipbench::set_interrupt_notice(fmt::format("interrupted: {} cases kept ...", n));
#pragma once

#include <string>

namespace tipbench {

void install_interrupt_notice(const std::string& notice);
// Safe against a signal arriving meanwhile: the handler sees the old notice or the new one.
void set_interrupt_notice(const std::string& notice);
// Back to the default actions (the run is over, or is handing over to code of its own).
void remove_interrupt_notice();

}  // namespace tipbench
