#include "tipbench/results/partial_run.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/common/json_number.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tipbench {

namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kMarker = kPartialRunMarker;

}  // namespace

std::string partial_path_for(const std::string& out) { return out + ".partial"; }

int count_cases(const Result& result) {
  int n = 0;
  for (const auto& s : result.suites) n += static_cast<int>(s.cases.size());
  return n;
}

void write_partial_run(const PartialRun& partial, const std::string& path) {
  ojson j = {{kMarker, kPartialRunVersion},
             {"out", partial.out},
             {"run_options", ojson::parse(partial.run_options.dump())},
             {"result", to_json_document(partial.result)}};
  if (const auto& c = partial.in_progress) {
    j["case_in_progress"] = {
        {"suite", c->suite}, {"blocks_done", c->blocks_done}, {"case", case_document(c->case_result)}};
  }
  write_file_atomically(path, checked_dump(j, 1, path) + "\n");
}

namespace {

bool is_partial_run(const ojson& j) { return j.is_object() && j.contains(kMarker); }

PartialRun partial_from_document(const ojson& j, const std::string& path) {
  if (!is_partial_run(j)) {
    throw InputError(
        fmt::format("{}: not a partial run file (those end in .partial and are kept beside an "
                    "interrupted run's --out)",
                    path));
  }
  if (j.at(kMarker) != kPartialRunVersion) {
    throw InputError(fmt::format("{}: partial run format {} is not the {} this tipbench reads", path,
                                 j.at(kMarker).dump(), kPartialRunVersion));
  }
  PartialRun p;
  try {
    p.out = j.at("out").get<std::string>();
    p.run_options = nlohmann::json::parse(j.at("run_options").dump());
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: a damaged partial run file: {}", path, e.what()));
  }
  if (!j.contains("result")) throw InputError(path + ": a damaged partial run file: no result");
  p.result = parse_result(j.at("result"), path);
  if (j.contains("case_in_progress")) {
    try {
      const auto& c = j.at("case_in_progress");
      CaseInProgress in_progress{c.at("suite").get<std::string>(), case_from_document(c.at("case")),
                                 json_integer<int>(c, "blocks_done")};
      if (in_progress.blocks_done < 1) throw std::invalid_argument("blocks_done must be at least 1");
      for (const auto& arm : in_progress.case_result.arms) {
        // An arm still measured ran one trial in every finished block (a failed one may stop short).
        if (arm.status == ArmStatus::ok && arm.trials.size() != static_cast<std::size_t>(in_progress.blocks_done)) {
          throw std::invalid_argument(fmt::format("the ok arm {} has {} trial(s) in {} finished block(s)", arm.arm,
                                                  arm.trials.size(), in_progress.blocks_done));
        }
        for (const auto& t : arm.trials) {
          if (t.block < 0 || t.block >= in_progress.blocks_done)
            throw std::invalid_argument(
                fmt::format("a trial of block {} in {} finished block(s)", t.block, in_progress.blocks_done));
        }
      }
      p.in_progress = std::move(in_progress);
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: a damaged partial run file: its case in progress: {}", path, e.what()));
    }
  }
  return p;
}

}  // namespace

PartialRun read_partial_run(const std::string& path) {
  return partial_from_document(read_json_file(path, "partial run"), path);
}

Result read_result_or_partial(const std::string& path) {
  const ojson j = read_json_file(path, "result");
  if (!is_partial_run(j)) return parse_result(j, path);
  Result finished = partial_from_document(j, path).result;
  finished.context.warnings.push_back(
      fmt::format("{} is a partial run: the {} case(s) an interrupted run finished, not the cases it did not "
                  "reach (finish it with: tipbench run --resume {})",
                  path, count_cases(finished), path));
  return finished;
}

}  // namespace tipbench
