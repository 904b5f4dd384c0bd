// libFuzzer target for the .pt2 reader (scripts/fuzz-readers.sh --pt2; tests/fuzz/sanitize/ with
// TIPBENCH_FUZZ_PT2=ON, AddressSanitizer and UndefinedBehaviorSanitizer on tipbench's reader, the
// real LibTorch under it). Each input replaces one record of a real archive
// (TIPBENCH_FUZZ_PT2_SEED, a .pt2 that tests/models/make_model_files.py wrote; the record named by
// TIPBENCH_FUZZ_PT2_RECORD, e.g. models/eval.json); the archive is read, both programs prepared and
// run on two images. An ExportedProgramError or a c10::Error is an answer; a crash, a sanitizer
// report or another exception is a finding.
//   TIPBENCH_FUZZ_PT2_SEED=tiny.pt2 TIPBENCH_FUZZ_PT2_RECORD=models/eval.json build-fuzz/fuzz_pt2 corpus/
#include "exported_program.h"
#include "pt2_feed.h"

#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fuzz = tipbench::fuzz;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    std::fprintf(stderr, "fuzz_pt2: set %s (see the header of tests/fuzz/fuzz_pt2.cpp)\n", name);
    std::exit(2);
  }
  return v;
}

const fuzz::Records& seed() {
  static const fuzz::Records records = [] {
    std::ifstream in(env("TIPBENCH_FUZZ_PT2_SEED"), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return fuzz::lean_records(bytes.str());
  }();
  return records;
}

void run(const tipbench::models::ExportedArchive& archive) {
  std::vector<torch::Tensor> state;
  for (const auto& t : archive.state) state.push_back(t.value);
  const auto images = torch::zeros({2, 3, 32, 32});
  torch::NoGradGuard no_grad;
  (void)archive.eval->run(state, images);
  (void)archive.train->run(state, images);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string record = env("TIPBENCH_FUZZ_PT2_RECORD");
  auto records = seed();
  if (!records.contains(record)) {
    std::fprintf(stderr, "fuzz_pt2: the seed archive holds no record %s\n", record.c_str());
    std::exit(2);
  }
  records[record] = std::string(reinterpret_cast<const char*>(data), size);
  try {
    const auto archive = tipbench::models::read_exported_archive(fuzz::write_archive(records));
    run(*archive);
  } catch (const tipbench::models::ExportedProgramError&) {
  } catch (const c10::Error&) {  // an op refusing its arguments: the load check's answer too
  }
  return 0;
}
