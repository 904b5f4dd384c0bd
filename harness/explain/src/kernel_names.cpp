// A kernel's name made comparable across runs and builds (template arguments, parameter lists and
// hashes dropped), as the breakdown keys kernels (profiled_steps.cpp) and explain names them.
#include "tipbench/explain/kernel_names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace tipbench {

namespace {

// The index of the bracket that closes the one at `open` ('<' with '>', '(' with ')'), or npos.
std::size_t closing(const std::string& s, std::size_t open) {
  const char o = s[open], c = o == '<' ? '>' : ')';
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    if (s[i] == c && --depth == 0) return i;
  }
  return std::string::npos;
}

// A template that only wraps the kernel it runs (CUTLASS's cutlass::Kernel<Op>,
// cutlass::Kernel2<Op>, cutlass::device_kernel<Op>): its first argument is the kernel's identity.
bool is_kernel_wrapper(const std::string& name) {
  return name.ends_with("::Kernel") || name.ends_with("::Kernel2") || name.ends_with("::device_kernel");
}

std::string without_hash(std::string out) {
  // A trailing hash ("..._kernel_0x1f2e3d4c", "..._a1b2c3d4e5f6"): 8 or more hex digits.
  const auto last = out.find_last_of('_');
  if (last != std::string::npos && out.size() - last - 1 >= 8) {
    std::string tail = out.substr(last + 1);
    if (tail.starts_with("0x")) tail.erase(0, 2);
    if (!tail.empty() &&
        std::all_of(tail.begin(), tail.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      out.erase(last);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

// Kineto demangles kernel names with __cxa_demangle, which writes an anonymous namespace as
// "(anonymous namespace)": "void at::native::(anonymous namespace)::max_pool_forward_nchw<float>(...)"
// keeps "at::native::(anonymous namespace)::max_pool_forward_nchw", and a parenthesis followed by
// "::" is part of a name, not its parameter list.
std::string normalised_kernel_name(const std::string& raw) {
  std::string s = raw;
  if (s.starts_with("void ")) s.erase(0, 5);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<') {
      const auto end = closing(s, i);
      if (end == std::string::npos) break;
      if (is_kernel_wrapper(out)) {  // keep the wrapped kernel's name: Kernel2<cutlass_80_..._align4>
        std::string first = s.substr(i + 1, end - i - 1);
        int depth = 0;
        for (std::size_t k = 0; k < first.size(); ++k) {
          depth += first[k] == '<' || first[k] == '(' ? 1 : first[k] == '>' || first[k] == ')' ? -1 : 0;
          if (first[k] == ',' && depth == 0) {
            first.resize(k);
            break;
          }
        }
        out += "<" + normalised_kernel_name(first) + ">";
      }
      i = end;
    } else if (ch == '(') {
      const auto end = closing(s, i);
      if (end == std::string::npos || s.compare(end + 1, 2, "::") != 0) break;  // the parameter list
      out += s.substr(i, end - i + 1);
      i = end;
    } else {
      out += ch;
    }
  }
  out = without_hash(std::move(out));
  return out.empty() ? raw : out;
}

}  // namespace tipbench
