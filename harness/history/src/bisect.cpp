#include "tipbench/history/bisect.h"

#include <stdexcept>

namespace tipbench::history {

BisectSearch bisect(std::size_t commits, const std::function<BuildSameness(std::size_t)>& measure) {
  if (commits == 0) throw std::invalid_argument("bisect: no commit to search");
  BisectSearch s;
  s.first_bad = commits - 1;
  const auto measured = [&](std::size_t i) {
    ++s.measured;
    return measure(i);
  };
  const BuildSameness end = measured(s.first_bad);
  if (end == BuildSameness::same) {
    s.outcome = BisectSearch::Outcome::not_reproduced;
    return s;
  }
  if (end == BuildSameness::undecided) {
    s.outcome = BisectSearch::Outcome::ends_undecided;
    return s;
  }
  while (static_cast<std::ptrdiff_t>(s.first_bad) - s.last_good > 1) {
    const auto mid = static_cast<std::size_t>((s.last_good + static_cast<std::ptrdiff_t>(s.first_bad)) / 2);
    const BuildSameness v = measured(mid);
    if (v == BuildSameness::undecided) {
      s.outcome = BisectSearch::Outcome::stopped;
      s.undecided = mid;
      return s;
    }
    if (v == BuildSameness::different) {
      s.first_bad = mid;
    } else {
      s.last_good = static_cast<std::ptrdiff_t>(mid);
    }
  }
  s.outcome = BisectSearch::Outcome::found;
  return s;
}

}  // namespace tipbench::history
