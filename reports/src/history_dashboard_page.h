// Internal to the reports library: the history dashboard's one page (HTML, CSS and the script
// that filters the series index and draws each shown series from its data file).
#pragma once

#include <string>

namespace tipbench::reports {

std::string dashboard_page(const std::string& title);

}  // namespace tipbench::reports
