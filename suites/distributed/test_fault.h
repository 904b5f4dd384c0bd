// TEST KNOB for the fault tests (docs/distributed.md): TIPBENCH_TEST_FAULT=RANK:kill:STEP or
// RANK:stop:STEP makes rank RANK (any rank, 0 included) kill (SIGKILL) or stop (SIGSTOP, a hang)
// itself at its STEP-th training step. With TIPBENCH_TEST_FAULT_MARK=FILE, the fault's wall-clock
// time goes there first, so a test can time the others' exit from the fault, not from the launch.
// A no-op unless the variable is set. Example (every rank, once per step):
//   tipbench::distributed::count_step_for_test_fault(session.rank());
#pragma once

namespace tipbench::distributed {

void count_step_for_test_fault(int rank);

}  // namespace tipbench::distributed
