// The tipbench command line: `tipbench <list|run|env|data|baseline|compare|gate|report> [flags]`.
// Returns the exit code (tipbench/common/exit_codes.h). main() forwards argv here; tests call it in-process.
//   int code = tipbench::cli::main({"tipbench", "run", "--quick"});
#pragma once

#include <string>
#include <vector>

namespace tipbench::cli {

int main(const std::vector<std::string>& argv);

}  // namespace tipbench::cli
