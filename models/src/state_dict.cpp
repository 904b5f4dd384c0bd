#include "tipbench/models/state_dict.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tipbench::models {
namespace {

std::string shape_string(c10::IntArrayRef sizes) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << ']';
  return s.str();
}

// The first line of an exception message: c10::Error appends a C++ backtrace.
std::string first_line(const std::exception& e) {
  std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// A minimal unpickler for what torch.save writes into data.pkl (pickle protocol 2, also the
// few protocol 3-5 opcodes), with tensors rebuilt from the archive's storage records.
//
// Why not torch::pickle_load: in LibTorch 2.11 its unpickler turns every collections.OrderedDict
// into None (it expects them only as a tensor's empty backward-hooks), so the OrderedDict that
// `torch.save(model.state_dict())` writes fails to load. Values live on the stack as IValues; a
// pickled global (a class or function) is a 2-tuple (kGlobalTag, "module.name").
class StateDictUnpickler {
 public:
  explicit StateDictUnpickler(caffe2::serialize::PyTorchStreamReader& archive) : archive_(archive) {}

  c10::IValue parse(const char* data, size_t size) {
    p_ = data;
    end_ = data + size;
    while (true) {
      const auto op = static_cast<uint8_t>(read_byte());
      if (op == '.') break;  // STOP
      step(op);
    }
    TORCH_CHECK(stack_.size() == 1, "malformed pickle: ", stack_.size(), " values left at STOP");
    return stack_.back();
  }

 private:
  static constexpr const char* kGlobalTag = "\x01pickle-global";

  char read_byte() {
    TORCH_CHECK(p_ < end_, "pickle data ends early");
    return *p_++;
  }
  const char* read_n(size_t n) {
    TORCH_CHECK(static_cast<size_t>(end_ - p_) >= n, "pickle data ends early");
    const char* at = p_;
    p_ += n;
    return at;
  }
  template <typename T>
  T read_le() {  // the pickle's little-endian integers; the wheels run on little-endian hosts
    T v;
    std::memcpy(&v, read_n(sizeof(T)), sizeof(T));
    return v;
  }
  std::string read_line() {
    const char* start = p_;
    while (read_byte() != '\n') {
    }
    return std::string(start, p_ - 1);
  }
  c10::IValue pop() {
    TORCH_CHECK(!stack_.empty(), "malformed pickle: stack underflow");
    auto v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  size_t pop_mark() {
    TORCH_CHECK(!marks_.empty(), "malformed pickle: no MARK");
    const size_t m = marks_.back();
    marks_.pop_back();
    TORCH_CHECK(m <= stack_.size(), "malformed pickle: bad MARK");
    return m;
  }
  std::vector<c10::IValue> pop_to_mark() {
    const size_t m = pop_mark();
    std::vector<c10::IValue> items(std::make_move_iterator(stack_.begin() + m), std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  c10::IValue& top() {
    TORCH_CHECK(!stack_.empty(), "malformed pickle: stack underflow");
    return stack_.back();
  }
  void memo_put(size_t id) { memo_[id] = top(); }
  c10::IValue memo_get(size_t id) {
    auto it = memo_.find(id);
    TORCH_CHECK(it != memo_.end(), "malformed pickle: memo ", id, " unset");
    return it->second;
  }
  static c10::IValue make_global(const std::string& module, const std::string& name) {
    return c10::ivalue::Tuple::create(std::string(kGlobalTag), module + "." + name);
  }
  static std::string global_name(const c10::IValue& v) {
    if (v.isTuple()) {
      const auto& e = v.toTupleRef().elements();
      if (e.size() == 2 && e[0].isString() && e[0].toStringRef() == kGlobalTag) return e[1].toStringRef();
    }
    return {};
  }
  static c10::impl::GenericDict as_dict(const c10::IValue& v) {
    TORCH_CHECK(v.isGenericDict(), "malformed pickle: expected a dict, got ", v.tagKind());
    return v.toGenericDict();
  }
  static std::vector<int64_t> int_tuple(const c10::IValue& v) {
    std::vector<int64_t> out;
    for (const auto& e : v.toTupleRef().elements()) out.push_back(e.toInt());
    return out;
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80: read_byte(); break;                                       // PROTO
      case 0x95: read_n(8); break;                                         // FRAME
      case '(': marks_.push_back(stack_.size()); break;                    // MARK
      case '0': pop(); break;                                              // POP
      case '1': pop_to_mark(); break;                                      // POP_MARK
      case '2': stack_.push_back(top()); break;                            // DUP
      case 'N': stack_.emplace_back(); break;                              // NONE
      case 0x88: stack_.emplace_back(true); break;                         // NEWTRUE
      case 0x89: stack_.emplace_back(false); break;                        // NEWFALSE
      case 'K': stack_.emplace_back(int64_t{read_le<uint8_t>()}); break;   // BININT1
      case 'M': stack_.emplace_back(int64_t{read_le<uint16_t>()}); break;  // BININT2
      case 'J': stack_.emplace_back(int64_t{read_le<int32_t>()}); break;   // BININT
      case 0x8a: {                                                         // LONG1
        const auto n = static_cast<uint8_t>(read_byte());
        TORCH_CHECK(n <= 8, "integer of ", int(n), " bytes is too large");
        const char* b = read_n(n);
        uint64_t u = 0;
        for (int i = 0; i < n; ++i) u |= uint64_t(uint8_t(b[i])) << (8 * i);
        if (n > 0 && n < 8 && (uint8_t(b[n - 1]) & 0x80)) u |= ~uint64_t{0} << (8 * n);  // sign-extend
        stack_.emplace_back(static_cast<int64_t>(u));
        break;
      }
      case 'G': {  // BINFLOAT (big-endian)
        const char* b = read_n(8);
        uint64_t u = 0;
        for (int i = 0; i < 8; ++i) u = (u << 8) | uint8_t(b[i]);
        double d;
        std::memcpy(&d, &u, 8);
        stack_.emplace_back(d);
        break;
      }
      case 'X':
      case 'T':
      case 'B': {  // BINUNICODE, BINSTRING, BINBYTES
        const auto n = read_le<uint32_t>();
        stack_.emplace_back(std::string(read_n(n), n));
        break;
      }
      case 0x8c:
      case 'U':
      case 'C': {  // SHORT_BINUNICODE, SHORT_BINSTRING, SHORT_BINBYTES
        const auto n = read_le<uint8_t>();
        stack_.emplace_back(std::string(read_n(n), n));
        break;
      }
      case 0x8d:
      case 0x8e: {  // BINUNICODE8, BINBYTES8
        const auto n = read_le<uint64_t>();
        stack_.emplace_back(std::string(read_n(n), n));
        break;
      }
      case ')': stack_.emplace_back(c10::ivalue::Tuple::create(std::vector<c10::IValue>{})); break;
      case 't': stack_.emplace_back(c10::ivalue::Tuple::create(pop_to_mark())); break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        const size_t n = op - 0x84;
        TORCH_CHECK(stack_.size() >= n, "malformed pickle: stack underflow");
        std::vector<c10::IValue> items(std::make_move_iterator(stack_.end() - n),
                                       std::make_move_iterator(stack_.end()));
        stack_.resize(stack_.size() - n);
        stack_.emplace_back(c10::ivalue::Tuple::create(std::move(items)));
        break;
      }
      case ']': stack_.emplace_back(c10::impl::GenericList(c10::AnyType::get())); break;
      case 'l': {  // LIST
        c10::impl::GenericList list(c10::AnyType::get());
        for (auto& v : pop_to_mark()) list.push_back(std::move(v));
        stack_.emplace_back(std::move(list));
        break;
      }
      case 'a': {  // APPEND
        auto v = pop();
        top().toList().push_back(std::move(v));
        break;
      }
      case 'e': {  // APPENDS
        auto items = pop_to_mark();
        auto list = top().toList();
        for (auto& v : items) list.push_back(std::move(v));
        break;
      }
      case '}': stack_.emplace_back(c10::impl::GenericDict(c10::AnyType::get(), c10::AnyType::get())); break;
      case 'd':
      case 'u': {  // DICT, SETITEMS
        auto items = pop_to_mark();
        TORCH_CHECK(items.size() % 2 == 0, "malformed pickle: odd number of dict items");
        c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
        if (op == 'u') dict = as_dict(top());
        for (size_t i = 0; i < items.size(); i += 2) dict.insert_or_assign(items[i], items[i + 1]);
        if (op == 'd') stack_.emplace_back(std::move(dict));
        break;
      }
      case 's': {  // SETITEM
        auto value = pop();
        auto key = pop();
        as_dict(top()).insert_or_assign(std::move(key), std::move(value));
        break;
      }
      case 'q': memo_put(read_le<uint8_t>()); break;                     // BINPUT
      case 'r': memo_put(read_le<uint32_t>()); break;                    // LONG_BINPUT
      case 0x94: memo_put(memo_.size()); break;                          // MEMOIZE
      case 'h': stack_.push_back(memo_get(read_le<uint8_t>())); break;   // BINGET
      case 'j': stack_.push_back(memo_get(read_le<uint32_t>())); break;  // LONG_BINGET
      case 'c': {                                                        // GLOBAL
        auto module = read_line();
        auto name = read_line();
        stack_.push_back(make_global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = pop();
        auto module = pop();
        stack_.push_back(make_global(module.toStringRef(), name.toStringRef()));
        break;
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ
        auto args = pop();
        auto callable = pop();
        stack_.push_back(call(global_name(callable), args.toTupleRef().elements()));
        break;
      }
      case 'b': {  // BUILD: state on an OrderedDict (_metadata)
        auto state = pop();
        TORCH_CHECK(top().isGenericDict() || top().isTensor(), "unsupported object state (BUILD on ", top().tagKind(),
                    ")");
        break;
      }
      case 'Q': stack_.push_back(persistent_load(pop())); break;  // BINPERSID
      default: TORCH_CHECK(false, "unsupported pickle opcode 0x", std::hex, int(op));
    }
  }

  c10::IValue call(const std::string& fn, const std::vector<c10::IValue>& args) {
    if (fn == "collections.OrderedDict" || fn == "builtins.dict") {
      TORCH_CHECK(args.empty(), "OrderedDict with arguments is not supported");
      return c10::impl::GenericDict(c10::AnyType::get(), c10::AnyType::get());
    }
    if (fn == "torch._utils._rebuild_tensor_v2" || fn == "torch._utils._rebuild_tensor") {
      // (storage, storage_offset, size, stride[, requires_grad, backward_hooks[, metadata]])
      TORCH_CHECK(args.size() >= 4, fn, " with ", args.size(), " arguments");
      const auto storage = args[0].toTensor();
      return at::empty({0}, storage.options())
          .set_(storage.storage(), args[1].toInt(), int_tuple(args[2]), int_tuple(args[3]));
    }
    if (fn == "torch._utils._rebuild_parameter" || fn == "torch._utils._rebuild_parameter_with_state") {
      return args.at(0);  // (data, requires_grad, backward_hooks[, state])
    }
    if (fn == "torch.jit._pickle.restore_type_tag") return args.at(0);  // (value, type string)
    TORCH_CHECK(false, "unsupported object '", fn.empty() ? std::string("<not a global>") : fn,
                "' (a state dict holds only tensors)");
  }

  // ('storage', <torch.FloatStorage>, key, location, numel) -> a flat CPU tensor on the storage.
  c10::IValue persistent_load(const c10::IValue& pid) {
    const auto e = pid.toTupleRef().elements().vec();
    TORCH_CHECK(e.size() == 5 && e[0].toStringRef() == "storage", "unsupported persistent id");
    const auto& key = e[2].toStringRef();
    if (auto it = storages_.find(key); it != storages_.end()) return it->second;
    const auto dtype = storage_dtype(global_name(e[1]));
    const int64_t numel = e[4].toInt();
    const size_t nbytes = static_cast<size_t>(numel) * c10::elementSize(dtype);
    at::DataPtr data;
    if (nbytes > 0) {
      size_t size = 0;
      std::tie(data, size) = archive_.getRecord("data/" + key);
      TORCH_CHECK(size >= nbytes, "storage record data/", key, " has ", size, " bytes, expected ", nbytes);
    }
    at::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), /*allocator=*/nullptr,
                        /*resizable=*/false);
    auto tensor = at::empty({0}, at::TensorOptions().dtype(dtype)).set_(storage);
    storages_.emplace(key, tensor);
    return tensor;
  }

  static at::ScalarType storage_dtype(const std::string& name) {  // "torch.FloatStorage" -> Float
    if (name == "torch.UntypedStorage") return at::kByte;
    for (int i = 0; i < static_cast<int>(at::ScalarType::NumOptions); ++i) {
      const auto t = static_cast<at::ScalarType>(i);
      if (name == std::string("torch.") + c10::toString(t) + "Storage") return t;
    }
    TORCH_CHECK(false, "unsupported storage type '", name, "'");
  }

  caffe2::serialize::PyTorchStreamReader& archive_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  std::vector<c10::IValue> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<size_t, c10::IValue> memo_;
  std::unordered_map<std::string, c10::IValue> storages_;
};

}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> load_tensors(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw std::runtime_error("cannot open state dict '" + path + "'");
  c10::IValue value;
  try {
    caffe2::serialize::PyTorchStreamReader archive(path);
    if (archive.hasRecord("byteorder")) {
      auto [data, size] = archive.getRecord("byteorder");
      const std::string order(static_cast<const char*>(data.get()), size);
      TORCH_CHECK(order == "little", "byte order '", order, "' is not supported");
    }
    auto [data, size] = archive.getRecord("data.pkl");
    value = StateDictUnpickler(archive).parse(static_cast<const char*>(data.get()), size);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot parse state dict '" + path +
                             "' (expected a torch.save zip archive): " + first_line(e));
  }
  if (!value.isGenericDict()) {
    throw std::runtime_error("state dict '" + path + "' holds a " + value.tagKind() + ", not a dict of name -> tensor");
  }
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : value.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) {
      throw std::runtime_error("state dict '" + path + "' has an entry that is not str -> Tensor (" +
                               item.key().tagKind() + " -> " + item.value().tagKind() + ")");
    }
    out.emplace_back(item.key().toStringRef(), item.value().toTensor());
  }
  return out;
}

std::string LoadReport::describe() const {
  std::ostringstream s;
  s << "state dict '" << path << "': ";
  if (ok()) {
    s << "ok, " << loaded.size() << " tensors loaded";
    return s.str();
  }
  s << missing.size() << " missing, " << unexpected.size() << " unexpected, " << mismatched.size() << " mismatched";
  for (const auto& name : missing) s << "\n  missing: " << name;
  for (const auto& name : unexpected) s << "\n  unexpected: " << name;
  for (const auto& what : mismatched) s << "\n  mismatched: " << what;
  return s.str();
}

LoadReport load_state_dict(torch::nn::Module& module, const std::string& path, bool strict) {
  const auto entries = load_tensors(path);
  std::unordered_map<std::string, const torch::Tensor*> in_file;
  for (const auto& [name, tensor] : entries) in_file.emplace(name, &tensor);

  std::vector<std::pair<std::string, torch::Tensor>> targets;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) targets.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) targets.emplace_back(item.key(), item.value());

  LoadReport report;
  report.path = path;
  std::unordered_set<std::string> in_module;
  std::vector<std::pair<torch::Tensor, const torch::Tensor*>> copies;
  for (const auto& [name, target] : targets) {
    in_module.insert(name);
    auto it = in_file.find(name);
    if (it == in_file.end()) {
      report.missing.push_back(name);
    } else if (it->second->sizes() != target.sizes()) {
      report.mismatched.push_back(name + ": expected " + shape_string(target.sizes()) + ", got " +
                                  shape_string(it->second->sizes()));
    } else {
      copies.emplace_back(target, it->second);
      report.loaded.push_back(name);
    }
  }
  for (const auto& [name, tensor] : entries) {
    if (!in_module.count(name)) report.unexpected.push_back(name);
  }

  if (strict && !report.ok()) throw std::runtime_error(report.describe());
  torch::NoGradGuard no_grad;
  for (auto& [target, source] : copies) target.copy_(*source);
  return report;
}

void save_state_dict(const torch::nn::Module& module, const std::string& path) {
  c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    dict.insert(item.key(), item.value().detach().to(torch::kCPU).contiguous());
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    dict.insert(item.key(), item.value().detach().to(torch::kCPU).contiguous());
  }
  // torch::pickle_save, but with tag_aggregates=false: its type tags
  // (torch.jit._pickle.restore_type_tag) make torch.load(weights_only=True) refuse the file.
  std::vector<char> pickle;
  torch::jit::Pickler pickler([&](const char* data, size_t n) { pickle.insert(pickle.end(), data, data + n); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr,
                              /*memoized_class_types=*/nullptr, /*get_tensor_id=*/nullptr,
                              /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(dict));
  pickler.stop();
  try {
    caffe2::serialize::PyTorchStreamWriter writer(path);
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot write state dict '" + path + "': " + first_line(e));
  }
}

}  // namespace tipbench::models
