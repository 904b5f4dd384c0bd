// The chart kind a suite declares, as the result records it (`suites[].chart`, since 1.4): written
// and read back, absent in an older result (the report then infers it), and a name this reader
// does not know read as none. Core only.
#include "tipbench/results/chart_kind.h"
#include "tipbench/results/result.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using ojson = nlohmann::ordered_json;
using tipbench::ChartKind;

tipbench::Result one_suite(std::optional<ChartKind> chart) {
  tipbench::Result r;
  r.context.timestamp_utc = "2026-11-25T00:00:00Z";
  tipbench::SuiteResult s;
  s.name = "batch_size";
  s.description = "d";
  s.isolation = "in_process";
  s.chart = chart;
  r.suites.push_back(s);
  return r;
}

TEST(ChartKind, NamesRoundTrip) {
  for (const auto kind : {ChartKind::none, ChartKind::batch_curves, ChartKind::memory_vs_time, ChartKind::scaling,
                          ChartKind::pipeline_ladder}) {
    EXPECT_EQ(tipbench::chart_kind_from_string(tipbench::to_string(kind)), kind) << tipbench::to_string(kind);
  }
  EXPECT_EQ(tipbench::to_string(ChartKind::pipeline_ladder), "pipeline_ladder");
}

TEST(ChartKind, ANameThisReaderDoesNotKnowIsNone) {
  EXPECT_EQ(tipbench::chart_kind_from_string("violin"), ChartKind::none);
}

TEST(ChartKind, TheResultRecordsTheDeclaredKindNoneIncluded) {
  for (const auto kind : {ChartKind::batch_curves, ChartKind::none}) {
    const ojson doc = tipbench::to_json_document(one_suite(kind));
    EXPECT_EQ(doc.at("suites").at(0).at("chart"), tipbench::to_string(kind));
    EXPECT_EQ(tipbench::parse_result(doc, "r.json").suites.at(0).chart, kind);
  }
}

TEST(ChartKind, AnOlderResultRecordsNoKind) {
  ojson doc = tipbench::to_json_document(one_suite(ChartKind::scaling));
  doc["schema_version"] = "1.3";
  doc["suites"][0].erase("chart");
  EXPECT_FALSE(tipbench::parse_result(doc, "old.json").suites.at(0).chart.has_value());
}

TEST(ChartKind, AKindThatIsNotTextIsAnInputError) {
  ojson doc = tipbench::to_json_document(one_suite(ChartKind::scaling));
  doc["suites"][0]["chart"] = 3;
  EXPECT_THROW(tipbench::parse_result(doc, "bad.json"), tipbench::InputError);
}

}  // namespace
