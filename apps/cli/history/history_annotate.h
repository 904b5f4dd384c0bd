// Internal to the CLI: `tipbench history annotate` and `history annotations`: notes on stored runs
// that detect and the dashboard honour (docs/history.md "Annotations"). Example:
//   history --store S annotate --exclude-run 12 --note "runner had ECC errors"
//   history --store S annotate --expected-change 30 --series zero_grad/ --note "LibTorch 2.12 upgrade"
#pragma once

#include "tipbench/history/store.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace tipbench::cli {

struct AnnotateFlags {
  std::int64_t exclude_run = 0;
  std::int64_t expected_run = 0;
  std::int64_t remove = 0;
  std::string series;  // --expected-change: only the run's series whose "case/arm metric" contains it
  std::string note;
};

void add_annotate_flags(CLI::App* command, AnnotateFlags& flags);

// Exit 0; 2 on bad input (no single action, no note, no such run or annotation, a --series that
// names none of the run's series). Throws StoreError when the store fails.
int annotate(history::HistoryStore& store, const AnnotateFlags& flags);
int list_annotations(const history::HistoryStore& store);

}  // namespace tipbench::cli
