// What an error says to a user: one line. c10 errors carry a C++ backtrace of 30 frames in
// what(); a reason in a table or a result keeps the first line of the message and, when c10 says
// where it was raised, that place. The full text is for --verbose. Example:
//   catch (const std::exception& e) { arm.reason = tipbench::error_summary(e); }
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

namespace tipbench {

// The first line with text of a message, plus " (raised from FUNC at FILE:LINE)" when a later line is c10's
// "Exception raised from FUNC at FILE:LINE (most recent call first):". Works on text that crossed
// a process boundary too (fresh-process trials, ranks).
std::string summarize_error_text(std::string_view text);

// summarize_error_text of the exception's full message (c10::Error included).
std::string error_summary(const std::exception& e);

// Everything the exception says, backtrace included (for --verbose).
std::string error_details(const std::exception& e);

// A value quoted in a message, kept short: the text itself up to `max` bytes, else its start and
// end around "..." and its length ("aaaa...aaaa (100000 bytes)"), so a 100 kB argument never
// becomes a 100 kB message.
std::string abbreviated(std::string_view text, std::size_t max = 120);

// A message that quotes text from a file kept on one line: control characters as C escapes
// ("\\n", "\\x1b"), so a name read from a file cannot end the line or move the cursor.
std::string one_line(std::string_view text);

}  // namespace tipbench
