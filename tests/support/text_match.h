// Whether a message holds a phrase: the one helper the tests' message checks share (one
// definition, so test files compiled together in a unity build never clash).
//   EXPECT_TRUE(contains(o.err, "exit 2")) << o.err;
#pragma once

#include <string>

namespace tipbench::testing {

inline bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace tipbench::testing
