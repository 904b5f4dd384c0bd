// Escaping for the HTML report: every string that comes from a result goes through one of these.
//   html_escape("<b>") == "&lt;b&gt;";   json_for_script(j) is safe inside <script>...</script>
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tipbench::reports {

// &, <, >, " and ' as entities: safe in element content and in quoted attributes.
std::string html_escape(std::string_view text);

// JSON text safe to embed in a <script> element: <, >, & and U+2028/U+2029 become \uXXXX escapes,
// so no "</script>", "<!--" or line separator in a string can end or break the script.
std::string json_for_script(const nlohmann::json& j);

// Markdown table cell: | and newlines escaped, HTML-significant characters as entities (GitHub
// renders inline HTML in comments).
std::string markdown_escape(std::string_view text);

}  // namespace tipbench::reports
