// Checks of the strings a file from elsewhere carries (a result, a store's row), made where it is
// read, so nothing downstream meets them unchecked (docs/security.md): a git commit becomes a path
// (`history detect --confirm --binaries 'builds/{commit}/tipbench'`), names reach Markdown, HTML
// and the comments of a generated Python script.
#pragma once

#include <string>
#include <string_view>

namespace tipbench {

// A git commit as `git rev-parse` writes it: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
bool is_git_sha(std::string_view text);
// A commit as messages show it: its first 12 digits; "-" for none.
std::string short_sha(const std::string& sha);

// Any byte below 0x20 or 0x7f (newline, escape, NUL ...).
bool has_control_character(std::string_view text);

// Throws std::invalid_argument naming `field` when `text` has a control character.
void check_name(std::string_view field, std::string_view text);

// Throws std::invalid_argument naming `field` unless `text` is "" (no git) or a git commit.
void check_git_sha(std::string_view field, std::string_view text);

}  // namespace tipbench
