// One result out of the per-block results of an interleaved session: `run --blocks 1` was called
// once per block (alternating with the other binary), so each result holds block 0 of every
// arm; merged, block i of the session is the i-th result. Summaries and comparisons are
// recomputed. Example:
//   Result head = tipbench::gate::merge_blocks(per_block_results);
#pragma once

#include "tipbench/results/result.h"

#include <vector>

namespace tipbench::gate {

// Throws InputError when the results do not describe the same suites, cases and arms. An arm
// that failed in any block is failed in the merge (with the first reason).
Result merge_blocks(const std::vector<Result>& blocks);

}  // namespace tipbench::gate
