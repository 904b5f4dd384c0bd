// libFuzzer target for the file readers (tests/fuzz/sanitize/, scripts/fuzz-readers.sh). The
// reader is chosen by TIPBENCH_FUZZ_READER (result, baseline, gate_config, manifest, partial_run). An input
// either parses or is refused with InputError inside the feed; anything else escapes, and
// libFuzzer reports it as a crash with the input that caused it, as it does a sanitizer report.
//   TIPBENCH_FUZZ_READER=result build-fuzz/fuzz_readers -max_total_time=60 corpus/result
#include "reader_feed.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const tipbench::fuzz::Reader& chosen_reader() {
  const char* name = std::getenv("TIPBENCH_FUZZ_READER");
  for (const auto& r : tipbench::fuzz::readers()) {
    if (name && name == std::string(r.name)) return r;
  }
  std::fprintf(stderr, "set TIPBENCH_FUZZ_READER to result, baseline, gate_config, manifest or partial_run\n");
  std::exit(2);
}

// A directory of this process's own for the files the feeds write.
std::string scratch_dir() {
  char tmpl[] = "/tmp/tipbench-fuzz-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::exit(2);
  return tmpl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto& reader = chosen_reader();
  static const std::string dir = scratch_dir();
  reader.feed(std::string(reinterpret_cast<const char*>(data), size), dir);
  return 0;
}
