// Feeds bytes to each reader of a file from outside: the result reader, the baseline store, the
// gate config, the dataset manifest and the partial run file of `run --resume`. Each feed writes the bytes where its
// reader looks (a directory of its own under `dir`), reads them, and uses what it read the way tipbench would
// (serialises it again). It returns whether the input parsed or was refused with InputError;
// any other exception escapes to the caller, which is the bug the fuzz test looks for.
//   auto outcome = tipbench::fuzz::readers()[0].feed(bytes, "/tmp/fuzz");
// No LibTorch: also built by the sanitizer and libFuzzer build (tests/fuzz/sanitize/).
#pragma once

#include <string>
#include <vector>

namespace tipbench::fuzz {

enum class Outcome { parsed, rejected };

struct Reader {
  const char* name;       // "result", "baseline", "gate_config", "manifest", "partial_run"
  const char* seed_file;  // the real file its corpus mutates, relative to the source tree (or made)
  Outcome (*feed)(const std::string& bytes, const std::string& dir);
};

// The five readers. The manifest's seed file is made by the data code (seed_manifest), the partial
// run file's from the example result (write_partial_run).
const std::vector<Reader>& readers();

// A real manifest.json: a small dataset made by tipbench::data::make_dataset under `dir`.
std::string seed_manifest(const std::string& dir);

// The real file a reader's corpus starts from: its seed_file under `source_dir`, or for the
// manifest and the partial run file one made under `scratch_dir`.
std::string seed_bytes(const Reader& reader, const std::string& source_dir, const std::string& scratch_dir);

}  // namespace tipbench::fuzz
