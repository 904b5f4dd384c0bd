// Seeded mutations of a real input file, for the reader fuzz test: truncations, bit flips, byte
// replacements (random and JSON-significant), extreme numbers in place of a number, a value of
// another type in place of a value, deleted and duplicated spans, and stacks of these. The same
// seed gives the same cases, and each case says how it was made, so a failure can be replayed.
//   for (const auto& m : tipbench::fuzz::mutations_of(bytes, {.seed = 1, .count = 1000})) feed(m.bytes);
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tipbench::fuzz {

struct Mutation {
  std::string how;    // "flip bit 3 of byte 1234", "truncate to 17 bytes", ...
  std::string bytes;  // the mutated file
};

struct MutationOptions {
  std::uint64_t seed = 1;
  int count = 1000;       // random mutations, after the truncations
  int truncations = 200;  // the first and last bytes one by one, the rest evenly spread
};

namespace detail {

// Numbers a reader must not convert silently: out of range of int, int64, uint64 and size_t,
// negative, fractional, huge floats (UB when cast to an integer) and beyond double (nlohmann
// throws out_of_range).
inline const std::vector<std::string>& extreme_numbers() {
  static const std::vector<std::string> v{"-1",
                                          "0",
                                          "1e300",
                                          "-1e300",
                                          "1e999",
                                          "2147483648",
                                          "-2147483649",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "-9223372036854775809",
                                          "0.5",
                                          "1e-320",
                                          "4294967296",
                                          "99999999999999999999999",
                                          "-0",
                                          "1E19"};
  return v;
}

inline const std::vector<std::string>& other_values() {
  static const std::vector<std::string> v{"null", "true", "\"\"",      "\"x\"", "[]",
                                          "{}",   "[1]",  "{\"a\":1}", "-1",    "1e300"};
  return v;
}

// Bytes that change JSON structure or encoding when they replace another.
inline const std::string& significant_bytes() {
  static const std::string s = std::string("{}[]\",:\\-+.eE019 tnf") + '\0' + '\x7f' + '\x80' + '\xc3' + '\xff';
  return s;
}

// [begin, end) of every number token (an optional '-' then digits, '.', 'e', 'E', '+', '-').
inline std::vector<std::pair<std::size_t, std::size_t>> number_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t j = i + 1;
      while (j < s.size() && std::string_view("0123456789.eE+-").find(s[j]) != std::string_view::npos) ++j;
      spans.emplace_back(i, j);
      i = j - 1;
    }
  }
  return spans;
}

// [begin, end) of every value after a ':' (up to the next ',' or closing bracket at its depth).
inline std::vector<std::pair<std::size_t, std::size_t>> value_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c != ':') continue;
    std::size_t b = i + 1;
    while (b < s.size() && s[b] == ' ') ++b;
    int depth = 0;
    bool quoted = false;
    std::size_t e = b;
    for (; e < s.size(); ++e) {
      const char d = s[e];
      if (quoted) {
        if (d == '\\')
          ++e;
        else if (d == '"')
          quoted = false;
        continue;
      }
      if (d == '"')
        quoted = true;
      else if (d == '{' || d == '[')
        ++depth;
      else if (d == '}' || d == ']') {
        if (depth == 0) break;
        --depth;
      } else if (d == ',' && depth == 0)
        break;
    }
    spans.emplace_back(b, e);
  }
  return spans;
}

}  // namespace detail

// One random mutation of `s` (appends its description to `how`).
inline std::string mutate_once(const std::string& s, std::mt19937_64& rng, std::string& how) {
  auto pick = [&](std::size_t n) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng));
  };
  if (s.empty()) {
    how += "insert '{'";
    return "{";
  }
  std::string out = s;
  const std::size_t at = pick(s.size());
  switch (pick(8)) {
    case 0: {
      const int bit = static_cast<int>(pick(8));
      out[at] = static_cast<char>(out[at] ^ (1 << bit));
      how += "flip bit " + std::to_string(bit) + " of byte " + std::to_string(at);
      break;
    }
    case 1: {
      const char c = static_cast<char>(pick(256));
      out[at] = c;
      how += "byte " + std::to_string(at) + " = " + std::to_string(static_cast<unsigned char>(c));
      break;
    }
    case 2: {
      const auto& sig = detail::significant_bytes();
      out[at] = sig[pick(sig.size())];
      how += "byte " + std::to_string(at) + " = " + std::to_string(static_cast<unsigned char>(out[at]));
      break;
    }
    case 3: {  // an extreme number in place of a number
      const auto spans = detail::number_spans(s);
      if (spans.empty()) return mutate_once(s, rng, how);
      const auto [b, e] = spans[pick(spans.size())];
      const auto& n = detail::extreme_numbers()[pick(detail::extreme_numbers().size())];
      out = s.substr(0, b) + n + s.substr(e);
      how += "number at " + std::to_string(b) + " = " + n;
      break;
    }
    case 4: {  // a value of another type
      const auto spans = detail::value_spans(s);
      if (spans.empty()) return mutate_once(s, rng, how);
      const auto [b, e] = spans[pick(spans.size())];
      const auto& v = detail::other_values()[pick(detail::other_values().size())];
      out = s.substr(0, b) + v + s.substr(e);
      how += "value at " + std::to_string(b) + " = " + v;
      break;
    }
    case 5: {  // delete a span
      const std::size_t n = 1 + pick(std::min<std::size_t>(64, s.size() - at));
      out.erase(at, n);
      how += "delete " + std::to_string(n) + " bytes at " + std::to_string(at);
      break;
    }
    case 6: {  // duplicate a span in place
      const std::size_t n = 1 + pick(std::min<std::size_t>(64, s.size() - at));
      out.insert(at, s.substr(at, n));
      how += "repeat " + std::to_string(n) + " bytes at " + std::to_string(at);
      break;
    }
    default: {  // a value of the document moved to another value's place
      const auto spans = detail::value_spans(s);
      if (spans.size() < 2) return mutate_once(s, rng, how);
      const auto [b, e] = spans[pick(spans.size())];
      const auto [sb, se] = spans[pick(spans.size())];
      out = s.substr(0, b) + s.substr(sb, se - sb) + s.substr(e);
      how += "value at " + std::to_string(b) + " = value at " + std::to_string(sb);
      break;
    }
  }
  return out;
}

// The truncations, then `count` random cases: mostly one mutation, a quarter of them 2 to 4.
inline std::vector<Mutation> mutations_of(const std::string& original, const MutationOptions& o = {}) {
  std::vector<Mutation> out;
  const std::size_t n = original.size();
  std::vector<std::size_t> lengths;
  const std::size_t edge = std::min<std::size_t>(n, static_cast<std::size_t>(o.truncations) / 4);
  for (std::size_t i = 0; i < edge; ++i) lengths.push_back(i), lengths.push_back(n - 1 - i);
  const int spread = o.truncations - static_cast<int>(lengths.size());
  for (int i = 0; i < spread && n > 0; ++i)
    lengths.push_back(n * static_cast<std::size_t>(i) / static_cast<std::size_t>(spread));
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (const auto len : lengths)
    out.push_back({"truncate to " + std::to_string(len) + " bytes", original.substr(0, len)});

  std::mt19937_64 rng(o.seed);
  for (int i = 0; i < o.count; ++i) {
    std::string how;
    std::string bytes = original;
    const int stack =
        std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? std::uniform_int_distribution<int>(2, 4)(rng) : 1;
    for (int k = 0; k < stack; ++k) {
      if (k) how += ", then ";
      bytes = mutate_once(bytes, rng, how);
    }
    out.push_back({std::move(how), std::move(bytes)});
  }
  return out;
}

}  // namespace tipbench::fuzz
