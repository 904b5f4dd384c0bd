// Internal: the report page's script, which draws the model's charts with Chart.js.
#pragma once

namespace tipbench::reports::detail {

extern const char* const kReportScript;
extern const char* const kReportStyle;

}  // namespace tipbench::reports::detail
