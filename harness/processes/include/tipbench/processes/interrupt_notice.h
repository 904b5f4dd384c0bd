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
// Before a file is written by rename: `notice` holds once `path` has been replaced (made, or
// renamed over), the current notice until then; a signal between the rename and the next
// set_interrupt_notice says the right one. set_ or unstage_interrupt_notice ends it.
void stage_interrupt_notice(const std::string& notice, const std::string& path);
void unstage_interrupt_notice();
// Back to the default actions (the run is over, or is handing over to code of its own).
void remove_interrupt_notice();

}  // namespace tipbench
