// Escaping for what tipbench writes in another language: every string that comes from a result,
// a store or the command line goes through the one helper of the language it lands in
// (docs/security.md). Names with control characters never get this far (checked_text.h refuses
// them where a result is read); these keep the output well-formed whatever the text.
//   html_escape("<b>") == "&lt;b&gt;";          json_for_script(j) is safe inside <script>...</script>
//   markdown_escape("a|[x](y)") == "a\\|\\[x\\](y)"; python_comment("a\nimport os") == "a import os"
//   url_path("javascript:alert(1)") == "javascript%3Aalert%281%29"
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tipbench {

// HTML: &, <, >, " and ' as entities: safe in element content and in quoted attributes.
std::string html_escape(std::string_view text);

// JSON text safe to embed in a <script> element: <, >, & and U+2028/U+2029 become \uXXXX escapes,
// so no "</script>", "<!--" or line separator in a string can end or break the script.
std::string json_for_script(const nlohmann::json& j);

// Markdown (GitHub's, in a table cell or a line of text): one line (newlines become spaces, other
// control characters go); |, \, `, *, [, ], ~ backslash-escaped, so no cell, code span, emphasis or
// link can start; <, > and & as entities (GitHub renders inline HTML); @ followed by a zero-width
// space (&#8203;), so no @team is notified.
std::string markdown_escape(std::string_view text);

// A Python comment's text: one line (every control character, and U+2028/U+2029/U+0085, becomes a
// space), so nothing after it can become code. The caller writes the "# ".
std::string python_comment(std::string_view text);

// A file path as a URL path (an href to a file beside the page): every byte but A-Z a-z 0-9 - . _ ~ /
// percent-encoded, so no scheme (javascript:), query or fragment can start. Still html_escape()d
// into an attribute, where it needs nothing.
std::string url_path(std::string_view path);

}  // namespace tipbench
