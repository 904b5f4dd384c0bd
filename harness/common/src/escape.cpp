#include "tipbench/common/escape.h"

#include <fmt/format.h>

namespace tipbench {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::json& j) {
  // dump() with replace keeps invalid UTF-8 from throwing; ensure_ascii=false keeps the text
  // readable, so U+2028/U+2029 (E2 80 A8/A9) must be escaped by hand.
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(text[i + 2]) == 0xA8 || static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The UTF-8 line breaks beyond ASCII: U+2028, U+2029 (E2 80 A8/A9) and U+0085 (C2 85). Their length, or 0.
std::size_t unicode_break_at(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  if (at(i) == 0xE2 && i + 2 < text.size() && at(i + 1) == 0x80 && (at(i + 2) == 0xA8 || at(i + 2) == 0xA9)) return 3;
  if (at(i) == 0xC2 && i + 1 < text.size() && at(i + 1) == 0x85) return 2;
  return 0;
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (const auto n = unicode_break_at(text, i); n > 0) {
      out += ' ';
      i += n - 1;
      continue;
    }
    switch (c) {
      case '|':
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '~':
        out += '\\';
        out += c;
        break;
      case '\n': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '@': out += "@&#8203;"; break;
      default:
        if (!is_control(static_cast<unsigned char>(c))) out += c;
    }
  }
  return out;
}

std::string python_comment(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (const auto n = unicode_break_at(text, i); n > 0) {
      out += ' ';
      i += n - 1;
    } else {
      out += is_control(static_cast<unsigned char>(text[i])) ? ' ' : text[i];
    }
  }
  return out;
}

std::string url_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' ||
                       c == '.' || c == '_' || c == '~' || c == '/';
    out += plain ? std::string(1, c) : fmt::format("%{:02X}", u);
  }
  return out;
}

}  // namespace tipbench
