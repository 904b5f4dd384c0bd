// A .pt2 archive as records, for the .pt2 reader's fuzzing (issue 48): the test's seeded
// mutations (tests/models/test_pt2_fuzz.cpp) and libFuzzer (tests/fuzz/fuzz_pt2.cpp,
// scripts/fuzz-readers.sh --pt2) both replace one record of a real archive and write the zip again.
//   Records r = read_records(bytes);  r["models/eval.json"] = mutated;  write_archive(r);
#pragma once

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>

namespace tipbench::fuzz {

using Records = std::map<std::string, std::string>;  // name (without the archive's folder) -> bytes

inline Records read_records(const std::string& bytes) {
  caffe2::serialize::PyTorchStreamReader reader(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(bytes.data(), static_cast<off_t>(bytes.size())));
  Records out;
  for (const auto& name : reader.getAllRecords()) {
    auto [data, size] = reader.getRecord(name);
    out[name] = std::string(static_cast<const char*>(data.get()), size);
  }
  return out;
}

// The records as a zip in one folder, as torch's archive writer lays them out.
inline std::string write_archive(const Records& records) {
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
    out.append(static_cast<const char*>(data), size);
    return size;
  });
  for (const auto& [name, bytes] : records) {
    // The writer adds its own version and byte-order records.
    if (name == ".data/version" || name == "byteorder" || name == ".data/serialization_id") continue;
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
  return out;
}

// A program's JSON without the nodes' metadata (stack traces): mutations land on what the reader
// reads. The archive stays one tipbench trains.
inline std::string lean_program(const std::string& text) {
  auto j = nlohmann::json::parse(text);
  for (auto& node : j.at("graph_module").at("graph").at("nodes")) node.erase("metadata");
  return j.dump();
}

// The seed archive with its programs made lean.
inline Records lean_records(const std::string& archive_bytes) {
  Records records = read_records(archive_bytes);
  for (auto& [name, bytes] : records) {
    if (name.ends_with("models/train.json") || name.ends_with("models/eval.json")) bytes = lean_program(bytes);
  }
  return records;
}

}  // namespace tipbench::fuzz
