// The search of `history bisect`, apart from git and builds: given the first-parent line of
// commits after a good one up to a bad one (oldest first) and a measure that says whether a
// commit's build is the same as the good one's, find the first commit that is not. As Chromium's
// Pinpoint does: the bad end first (a change the builds do not reproduce is not bisected), then
// halving; a measure that cannot decide stops the search where it stands.
//   const auto s = history::bisect(commits.size(), [&](std::size_t i) { return compare(commits[i]); });
#pragma once

#include <cstddef>
#include <functional>

namespace tipbench::history {

// A commit's build against the good build.
enum class BuildSameness { same, different, undecided };

struct BisectSearch {
  enum class Outcome {
    found,           // commits[first_bad] is the first commit whose build differs
    not_reproduced,  // the bad end's build measures the same as the good one: nothing to search
    ends_undecided,  // the bad end cannot be told from the good one
    stopped,         // commits[undecided] could not be told apart: the first bad is after last_good,
                     // at or before first_bad
  };
  Outcome outcome = Outcome::found;
  std::size_t first_bad = 0;      // index of the first commit known to differ
  std::ptrdiff_t last_good = -1;  // index of the last commit known to be the same; -1: the good end
  std::size_t undecided = 0;      // `stopped`: the commit the measure could not decide
  std::size_t measured = 0;       // how many times `measure` was called
};

// `commits` >= 1; `measure(i)` compares commit i's build with the good one. Each commit is
// measured at most once, about log2(commits) + 1 times in all.
BisectSearch bisect(std::size_t commits, const std::function<BuildSameness(std::size_t)>& measure);

}  // namespace tipbench::history
