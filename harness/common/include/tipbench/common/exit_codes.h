// Every tipbench subcommand exits with one of these (docs/cli.md lists them per subcommand).
#pragma once

namespace tipbench::exit_code {

inline constexpr int ok = 0;            // success; gate: PASS
inline constexpr int failed = 1;        // run: an arm failed; gate: confirmed regression
inline constexpr int usage = 2;         // bad flag, suite, model, device or input file
inline constexpr int inconclusive = 3;  // gate: too noisy or no matching baseline
inline constexpr int internal = 4;      // the run could not finish (e.g. result not writable)
// Ctrl-C is not caught: the process dies of SIGINT (a shell reports 130). Results are written only
// at the end, by rename, so nothing partial is left and no existing file is touched.
inline constexpr int interrupted = 130;

}  // namespace tipbench::exit_code
