// Reads a .pt2 archive as torch/export/pt2_archive/_package.py's package_pt2 writes it:
// archive_format "pt2"; models/NAME.json the serialized program (torch/_export/serde/schema.py);
// data/weights/NAME_weights_config.json and data/constants/NAME_constants_config.json naming each
// tensor's record, raw storage bytes (or a pickle when use_pickle); extra/FILE the extra files.
#include "exported_program.h"

#include "serde_types.h"
#include "tipbench/common/error_text.h"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fmt/format.h>

#include <cstring>

namespace tipbench::models {

namespace {

using json = nlohmann::json;
using caffe2::serialize::PyTorchStreamReader;

// The schema major version this reader follows (torch/_export/serde/schema.py SCHEMA_VERSION of
// torch 2.11: (8, 17)); a new major changes the graph's format, a new minor only adds to it.
constexpr int kSchemaMajor = 8;
constexpr const char* kMetadataRecord = "extra/tipbench.json";  // scripts/export_model.py's METADATA_FILE

std::unique_ptr<PyTorchStreamReader> open_archive(const std::string& bytes) {
  return std::make_unique<PyTorchStreamReader>(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(bytes.data(), static_cast<off_t>(bytes.size())));
}

std::string record(PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return {static_cast<const char*>(data.get()), size};
}

std::int64_t int_of(const json& size) {
  if (!size.contains("as_int")) throw ExportedProgramError("a stored tensor has a symbolic size");
  return serde_integer(size.at("as_int"));
}

std::vector<std::int64_t> ints_of(const json& sizes) {
  std::vector<std::int64_t> out;
  for (const auto& s : sizes) out.push_back(int_of(s));
  return out;
}

std::int64_t checked_product(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw ExportedProgramError(what + ": its size overflows 64 bits");
  return out;
}

std::int64_t checked_sum(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) throw ExportedProgramError(what + ": its size overflows 64 bits");
  return out;
}

// A stored tensor's view must stay inside its record, checked before anything is allocated:
// ATen's set_ grows a storage to fit (uninitialised heap read into the weights), and the clone
// allocates every element (a stride of 0 lets a 16-byte record claim 8 GiB). So: as many strides
// as sizes, none negative, the farthest element (offset + sum of (size-1)*stride) inside the
// record, and no more elements than the record holds, in overflow-checked arithmetic.
void check_view(const std::string& what, const std::vector<std::int64_t>& sizes,
                const std::vector<std::int64_t>& strides, std::int64_t offset, std::size_t record_bytes,
                std::size_t item_bytes) {
  constexpr std::size_t kMaxDims = 64;  // ATen's own limit for a tensor's dimensions
  if (sizes.size() != strides.size() || sizes.size() > kMaxDims)
    throw ExportedProgramError(fmt::format("{}: {} sizes and {} strides", what, sizes.size(), strides.size()));
  if (record_bytes % item_bytes != 0)
    throw ExportedProgramError(
        fmt::format("{}: its record of {} bytes is no whole number of elements", what, record_bytes));
  const auto held = static_cast<std::int64_t>(record_bytes / item_bytes);
  if (offset < 0) throw ExportedProgramError(what + ": a negative storage offset");
  std::int64_t elements = 1, farthest = offset;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0) throw ExportedProgramError(what + ": a negative size or stride");
    elements = checked_product(elements, sizes[d], what);
    if (sizes[d] > 0) farthest = checked_sum(farthest, checked_product(sizes[d] - 1, strides[d], what), what);
  }
  if (elements == 0) return;
  if (farthest >= held || elements > held) {
    throw ExportedProgramError(fmt::format("{}: it claims {} elements reaching element {}, but its record holds {}",
                                           what, elements, farthest, held));
  }
}

// One stored tensor: its storage's raw bytes viewed with the stored sizes, strides and offset.
torch::Tensor read_tensor(PyTorchStreamReader& reader, const std::string& folder, const std::string& name,
                          const json& entry) {
  const std::string bytes = record(reader, folder + entry.at("path_name").get<std::string>());
  if (entry.value("use_pickle", false)) {
    return torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toTensor();
  }
  const json& meta = entry.at("tensor_meta");
  const auto dtype = serde_scalar_type(serde_enum(meta.at("dtype")));
  const auto sizes = ints_of(meta.at("sizes"));
  const auto strides = ints_of(meta.at("strides"));
  const auto offset = int_of(meta.at("storage_offset"));
  check_view("its tensor '" + name + "'", sizes, strides, offset, bytes.size(), c10::elementSize(dtype));
  auto storage = torch::empty({static_cast<std::int64_t>(bytes.size())}, torch::kByte);
  std::memcpy(storage.data_ptr(), bytes.data(), bytes.size());
  auto tensor = torch::empty({0}, torch::TensorOptions().dtype(dtype))
                    .set_(storage.view(dtype).storage(), offset, sizes, strides)
                    .clone();
  if (entry.value("is_param", false)) tensor.set_requires_grad(meta.value("requires_grad", true));
  return tensor;
}

// The tensors a config names, as parameters and buffers (weights) or PROGRAM.NAME constants.
void read_tensors(PyTorchStreamReader& reader, const std::string& program, const std::string& kind,
                  std::vector<ExportedTensor>& out) {
  const std::string folder = "data/" + kind + "/";
  const std::string config_record = folder + program + "_" + kind + "_config.json";
  if (!reader.hasRecord(config_record)) return;
  const json config = json::parse(record(reader, config_record));
  for (const auto& [name, entry] : config.at("config").items()) {
    ExportedTensor t;
    t.value = read_tensor(reader, folder, name, entry);
    if (kind == "constants") {
      t.name = program + "." + name;
      t.kind = ExportedTensor::Kind::constant;
    } else {
      t.name = name;
      t.kind = entry.value("is_param", false) ? ExportedTensor::Kind::parameter : ExportedTensor::Kind::buffer;
    }
    out.push_back(std::move(t));
  }
}

json read_program(PyTorchStreamReader& reader, const std::string& program, ExportedArchive& archive) {
  const std::string name = "models/" + program + ".json";
  if (!reader.hasRecord(name)) {
    std::vector<std::string> held;
    for (const auto& r : reader.getAllRecords()) {
      if (r.rfind("models/", 0) == 0) held.push_back(r.substr(7));
    }
    throw ExportedProgramError(fmt::format(
        "holds no '{}' program (it holds {}): tipbench trains a .pt2 of scripts/export_model.py --format pt2, "
        "a train and an eval program, since the export bakes the training flag in",
        program, held.empty() ? "none" : fmt::format("{}", fmt::join(held, ", "))));
  }
  json model = json::parse(record(reader, name));
  const json& version = model.at("schema_version");
  const int major = serde_enum(version.at("major"));
  archive.schema_version = fmt::format("{}.{}", major, serde_enum(version.at("minor")));
  if (major != kSchemaMajor) {
    throw ExportedProgramError(fmt::format(
        "its graphs use torch.export's serialization schema {}; this tipbench reads schema {}.x (torch 2.11's); "
        "export it with the project's pinned torch",
        archive.schema_version, kSchemaMajor));
  }
  archive.torch_version = model.value("torch_version", "");
  return model;
}

}  // namespace

bool is_exported_archive(const std::string& bytes) {
  try {
    auto reader = open_archive(bytes);
    return reader->hasRecord("archive_format") && record(*reader, "archive_format").rfind("pt2", 0) == 0;
  } catch (const std::exception&) {
    return false;  // not a zip
  }
}

std::shared_ptr<const ExportedArchive> read_exported_archive(const std::string& bytes,
                                                             const std::vector<std::string>& allowed_ops) {
  auto archive = std::make_shared<ExportedArchive>();
  try {
    auto reader = open_archive(bytes);
    const json train = read_program(*reader, "train", *archive);
    const json eval = read_program(*reader, "eval", *archive);
    read_tensors(*reader, "train", "weights", archive->state);
    read_tensors(*reader, "train", "constants", archive->state);
    read_tensors(*reader, "eval", "constants", archive->state);
    if (reader->hasRecord(kMetadataRecord)) archive->metadata = record(*reader, kMetadataRecord);
    archive->train = std::make_unique<ExportedProgram>("train", train, archive->state, allowed_ops);
    archive->eval = std::make_unique<ExportedProgram>("eval", eval, archive->state, allowed_ops);
  } catch (const ExportedProgramError&) {
    throw;
  } catch (const std::exception& e) {  // the zip reader's, the JSON parser's, a pickle's
    throw ExportedProgramError("a damaged .pt2 archive: " + error_summary(e));
  }
  return archive;
}

}  // namespace tipbench::models
