// The graph of a torch.export program run through c10::Dispatcher (exported_program.h). Argument
// decoding follows torch/_export/serde/serialize.py (GraphModuleDeserializer.deserialize_input and
// deserialize_outputs), the run loop torch/fx/interpreter.py (Interpreter.run: call each node,
// release each value after its last use).
#include "exported_program.h"

#include "allowed_ops.h"
#include "serde_types.h"

#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>

namespace tipbench::models {

namespace {

using json = nlohmann::json;

// The one key of a serde union ({"as_tensor": {...}}) and its value.
std::pair<std::string, const json*> union_of(const json& u) {
  if (!u.is_object() || u.size() != 1) throw ExportedProgramError("a malformed argument: " + u.dump().substr(0, 80));
  return {u.begin().key(), &u.begin().value()};
}

// Sym-int arithmetic of the graph on the sizes of the images: values a file chose, so every
// operation is overflow-checked (a wrapped size would reach an op as a valid-looking number).
[[noreturn]] void size_overflow() { throw ExportedProgramError("a size computation overflows 64 bits"); }

std::int64_t sym_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) size_overflow();
  return r;
}

std::int64_t sym_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) size_overflow();
  return r;
}

std::int64_t sym_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) size_overflow();
  return r;
}

// Python's // and % on ints (the floor, not C++'s truncation).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  if (b == 0) throw ExportedProgramError("a size computation divides by zero");
  if (a == std::numeric_limits<std::int64_t>::min() && b == -1) size_overflow();  // the one quotient past int64
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

const std::map<std::string, std::function<std::int64_t(std::int64_t, std::int64_t)>>& int_operators() {
  static const std::map<std::string, std::function<std::int64_t(std::int64_t, std::int64_t)>> ops = {
      {"_operator.add", sym_add},
      {"_operator.sub", sym_sub},
      {"_operator.mul", sym_mul},
      {"_operator.floordiv", floor_div},
      {"_operator.mod", [](auto a, auto b) { return sym_sub(a, sym_mul(floor_div(a, b), b)); }},
  };
  return ops;
}

// One size of the images: a number, or a symbol ("Symbol('s77', positive=True, integer=True)")
// whose range the export proved the graph for (range_constraints; a max of null is unbounded).
ExportedProgram::Dim dim_of(const json& size, const json& ranges) {
  ExportedProgram::Dim d;
  if (size.contains("as_int")) {
    d.min = d.max = serde_integer(size.at("as_int"));
    return d;
  }
  const std::string expr = size.at("as_expr").at("expr_str").get<std::string>();
  const std::string prefix = "Symbol('";
  if (expr.rfind(prefix, 0) == 0) {
    const std::string symbol = expr.substr(prefix.size(), expr.find('\'', prefix.size()) - prefix.size());
    if (ranges.contains(symbol)) {
      const json& r = ranges.at(symbol);
      if (r.at("min_val").is_number()) d.min = serde_integer(r.at("min_val"));
      if (r.at("max_val").is_number()) d.max = serde_integer(r.at("max_val"));
    }
  }
  return d;
}

std::string dims_text(const std::vector<ExportedProgram::Dim>& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) {
    if (d.min == d.max) {
      parts.push_back(std::to_string(d.min));
    } else {
      parts.push_back(std::to_string(d.min) + ".." +
                      (d.max == std::numeric_limits<std::int64_t>::max() ? "" : std::to_string(d.max)));
    }
  }
  return fmt::format("[{}]", fmt::join(parts, ","));
}

}  // namespace

// One argument as the op receives it: a constant decoded at load time, a value of the graph, a
// list mixing both, or the images' device (a device baked in at export follows the model, as
// torch.export.passes.move_to_device_pass rewrites it).
struct Argument {
  enum class From { constant, value, list, device } from = From::constant;
  c10::IValue constant;
  int slot = -1;
  enum class ListOf { tensors, optional_tensors, ints, floats, bools } list = ListOf::ints;
  std::vector<std::pair<int, c10::IValue>> items;  // (slot, or -1 and the constant)
  bool wrap_number = false;                        // a number given for a Tensor parameter

  c10::IValue get(const std::vector<c10::IValue>& env, const at::Tensor& images) const {
    switch (from) {
      case From::constant: return constant;
      case From::device: return images.device();
      case From::value: return wrap_number ? wrapped(env[slot]) : env[slot];
      case From::list: break;
    }
    auto item = [&](const std::pair<int, c10::IValue>& i) -> const c10::IValue& {
      return i.first < 0 ? i.second : env[i.first];
    };
    switch (list) {
      case ListOf::tensors: {
        c10::List<at::Tensor> out;
        out.reserve(items.size());
        for (const auto& i : items) out.push_back(item(i).toTensor());
        return out;
      }
      case ListOf::optional_tensors: {
        c10::List<std::optional<at::Tensor>> out;
        for (const auto& i : items) out.push_back(item(i).isNone() ? std::nullopt : std::optional(item(i).toTensor()));
        return out;
      }
      case ListOf::ints: {
        c10::List<std::int64_t> out;
        out.reserve(items.size());
        for (const auto& i : items) out.push_back(item(i).toInt());
        return out;
      }
      case ListOf::floats: {
        c10::List<double> out;
        for (const auto& i : items) out.push_back(item(i).toDouble());
        return out;
      }
      case ListOf::bools: {
        c10::List<bool> out;
        for (const auto& i : items) out.push_back(item(i).toBool());
        return out;
      }
    }
    return {};
  }

  // Python wraps a number passed for a Tensor (add_(num_batches_tracked, 1)); so do we.
  static c10::IValue wrapped(const c10::IValue& v) {
    if (!(v.isInt() || v.isDouble() || v.isBool())) return v;
    auto t = c10::scalar_to_tensor(v.toScalar());
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  }
};

struct Step {
  std::optional<c10::OperatorHandle> op;                           // an ATen op, or
  std::function<std::int64_t(std::int64_t, std::int64_t)> int_op;  // sym-int arithmetic
  std::vector<Argument> arguments;                                 // in the schema's order
  // Where each returned value goes: one slot, or the slots of a returned list.
  std::vector<std::vector<int>> outputs;
  std::vector<int> last_uses;  // slots no later step reads
};

struct ExportedProgram::Compiled {
  std::string name;
  std::vector<std::string> allowed_ops;  // the user's --allow-op entries
  std::vector<Step> steps;
  std::vector<std::pair<int, std::size_t>> state_slots;  // (slot, index in the module's state)
  int images_slot = -1;
  std::vector<ExportedProgram::Dim> input_dims;
  int output_slot = -1;
  std::size_t slots = 0;
  std::map<std::string, int> slot_of;

  int slot(const std::string& value_name) {
    auto [it, fresh] = slot_of.try_emplace(value_name, static_cast<int>(slots));
    if (fresh) ++slots;
    return it->second;
  }
  int existing(const std::string& value_name) const {
    auto it = slot_of.find(value_name);
    if (it == slot_of.end())
      throw ExportedProgramError(fmt::format("the {} graph reads '{}' before it is made", name, value_name));
    return it->second;
  }
  // A symbolic value: a named value of the graph, or the number it was specialised to.
  std::pair<int, c10::IValue> sym(const json& s) const {
    const auto [kind, v] = union_of(s);
    if (kind == "as_name") return {existing(v->get<std::string>()), {}};
    if (kind == "as_int" || kind == "as_float" || kind == "as_bool") {
      if (v->is_boolean()) return {-1, v->get<bool>()};
      if (v->is_number_integer()) return {-1, serde_integer(*v)};
      return {-1, v->get<double>()};
    }
    throw ExportedProgramError("a symbolic value of kind " + kind);
  }

  Argument decode(const json& serialized, const c10::Argument& parameter) const;
  void add_node(const json& node);
  void set_inputs(const json& signature, const json& graph, const json& ranges,
                  const std::vector<ExportedTensor>& state);
  void set_outputs(const json& signature);
  void mark_last_uses();
};

Argument ExportedProgram::Compiled::decode(const json& serialized, const c10::Argument& parameter) const {
  Argument a;
  const auto [kind, value] = union_of(serialized);
  const auto& v = value;  // a lambda may not capture a structured binding before clang 16
  auto list_of = [&](Argument::ListOf type, const std::function<std::pair<int, c10::IValue>(const json&)>& item) {
    a.from = Argument::From::list;
    a.list = type;
    for (const auto& e : *v) a.items.push_back(item(e));
  };
  auto tensor = [&](const json& t) {
    return std::pair<int, c10::IValue>{existing(t.at("name").get<std::string>()), {}};
  };
  if (kind == "as_none") {
    a.constant = c10::IValue();
  } else if (kind == "as_tensor") {
    a.from = Argument::From::value;
    a.slot = existing(v->at("name").get<std::string>());
  } else if (kind == "as_tensors") {
    list_of(Argument::ListOf::tensors, tensor);
  } else if (kind == "as_optional_tensor") {
    const auto [k, t] = union_of(*v);
    if (k == "as_tensor") {
      a.from = Argument::From::value;
      a.slot = existing(t->at("name").get<std::string>());
    }
  } else if (kind == "as_optional_tensors") {
    list_of(Argument::ListOf::optional_tensors, [&](const json& e) {
      const auto [k, t] = union_of(e);
      return k == "as_tensor" ? tensor(*t) : std::pair<int, c10::IValue>{-1, c10::IValue()};
    });
  } else if (kind == "as_int" || kind == "as_float" || kind == "as_bool" || kind == "as_string") {
    if (kind == "as_int") a.constant = serde_integer(*v);
    if (kind == "as_float") a.constant = v->get<double>();
    if (kind == "as_bool") a.constant = v->get<bool>();
    if (kind == "as_string") a.constant = v->get<std::string>();
  } else if (kind == "as_ints") {
    a.constant = serde_integers(*v);
  } else if (kind == "as_floats") {
    a.constant = v->get<std::vector<double>>();
  } else if (kind == "as_bools") {
    c10::List<bool> list;
    for (const auto& b : *v) list.push_back(b.get<bool>());
    a.constant = list;
  } else if (kind == "as_strings") {
    a.constant = v->get<std::vector<std::string>>();
  } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
    auto [slot, constant] = sym(*v);
    if (slot < 0) {
      a.constant = constant;
    } else {
      a.from = Argument::From::value;
      a.slot = slot;
    }
  } else if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") {
    const auto type = kind == "as_sym_ints"     ? Argument::ListOf::ints
                      : kind == "as_sym_floats" ? Argument::ListOf::floats
                                                : Argument::ListOf::bools;
    list_of(type, [&](const json& e) { return sym(e); });
  } else if (kind == "as_scalar_type") {
    a.constant = static_cast<std::int64_t>(serde_scalar_type(serde_enum(*v)));
  } else if (kind == "as_memory_format") {
    a.constant = serde_memory_format(serde_enum(*v));
  } else if (kind == "as_layout") {
    a.constant = serde_layout(serde_enum(*v));
  } else if (kind == "as_device") {
    a.from = Argument::From::device;
  } else {
    throw ExportedProgramError(
        fmt::format("its {} graph passes an argument of kind {} (to {}), which tipbench's .pt2 runner does not take",
                    name, kind, parameter.name()));
  }
  // A number given for a Tensor parameter is wrapped as Python wraps it (the wrapped tensor of a
  // constant is made once: ops never write to an operand they only read).
  if (parameter.type()->kind() == c10::TypeKind::TensorType) {
    if (a.from == Argument::From::constant && a.constant.isScalar()) {
      a.constant = Argument::wrapped(a.constant);
    } else if (a.from == Argument::From::value) {
      a.wrap_number = true;
    }
  }
  return a;
}

void ExportedProgram::Compiled::add_node(const json& node) {
  const std::string target = node.at("target").get<std::string>();
  Step step;
  std::map<std::string, const json*> given;
  std::vector<const json*> positional;
  for (const auto& in : node.at("inputs")) {
    given[in.at("name").get<std::string>()] = &in.at("arg");
    positional.push_back(&in.at("arg"));
  }
  const std::string aten = "torch.ops.";
  if (auto it = int_operators().find(target); it != int_operators().end()) {
    step.int_op = it->second;
    if (positional.size() != 2)
      throw ExportedProgramError(target + " with " + std::to_string(positional.size()) + " inputs");
    static const c10::Argument number("x", c10::IntType::get());
    for (const json* p : positional) step.arguments.push_back(decode(*p, number));
  } else if (target.rfind(aten, 0) == 0 && target.find("higher_order") == std::string::npos) {
    // torch.ops.aten.conv2d.default -> aten::conv2d, overload "" ("default" is the unnamed one)
    const std::string qualified = target.substr(aten.size());
    const auto first = qualified.find('.'), last = qualified.rfind('.');
    if (first == std::string::npos || first == last) throw ExportedProgramError("a node calls " + target);
    const std::string op = qualified.substr(0, first) + "::" + qualified.substr(first + 1, last - first - 1);
    std::string overload = qualified.substr(last + 1);
    if (overload == "default") overload.clear();
    // The namespace and the names refused outright first: a refusal never depends on what this
    // process happens to have registered.
    if (auto why = op_refusal(c10::OperatorName(op, overload), allowed_ops); !why.empty())
      throw ExportedProgramError(why);
    step.op = c10::Dispatcher::singleton().findOp({op, overload});
    if (!step.op) {
      throw ExportedProgramError(fmt::format(
          "it calls {}, an op this process lacks (a custom op: tipbench loads no op libraries; export the model "
          "without it)",
          overload.empty() ? op : op + "." + overload));
    }
    if (auto why = op_refusal(*step.op, allowed_ops); !why.empty()) throw ExportedProgramError(why);
    for (const auto& parameter : step.op->schema().arguments()) {
      if (auto it = given.find(parameter.name()); it != given.end()) {
        step.arguments.push_back(decode(*it->second, parameter));
      } else if (parameter.default_value()) {
        Argument a;
        a.constant = *parameter.default_value();
        step.arguments.push_back(std::move(a));
      } else {
        throw ExportedProgramError(fmt::format("its {} graph gives {} no '{}'", name, op, parameter.name()));
      }
    }
  } else {
    throw ExportedProgramError(fmt::format(
        "its {} graph calls {}, which is no ATen op (tipbench's .pt2 runner calls ATen ops and size arithmetic only)",
        name, target));
  }
  for (const auto& out : node.at("outputs")) {
    const auto [kind, v] = union_of(out);
    std::vector<int> slots;
    if (kind == "as_tensor") {
      slots.push_back(slot(v->at("name").get<std::string>()));
    } else if (kind == "as_tensors") {
      for (const auto& t : *v) slots.push_back(slot(t.at("name").get<std::string>()));
    } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      slots.push_back(slot(v->at("as_name").get<std::string>()));
    } else if (kind != "as_none") {
      throw ExportedProgramError(fmt::format("its {} graph has an output of kind {} (from {})", name, kind, target));
    }
    step.outputs.push_back(std::move(slots));
  }
  steps.push_back(std::move(step));
}

void ExportedProgram::Compiled::set_inputs(const json& signature, const json& graph, const json& ranges,
                                           const std::vector<ExportedTensor>& state) {
  auto state_index = [&](const std::string& tensor_name) {
    for (std::size_t i = 0; i < state.size(); ++i) {
      if (state[i].name == tensor_name) return i;
    }
    throw ExportedProgramError(
        fmt::format("its {} graph takes '{}', which the archive does not hold", name, tensor_name));
  };
  for (const auto& spec : signature.at("input_specs")) {
    const auto [kind, v] = union_of(spec);
    const json& arg = v->at("arg");
    const std::string value = (arg.contains("name") ? arg : arg.at("as_tensor")).at("name").get<std::string>();
    if (kind == "parameter") {
      state_slots.emplace_back(slot(value), state_index(v->at("parameter_name").get<std::string>()));
    } else if (kind == "buffer") {
      state_slots.emplace_back(slot(value), state_index(v->at("buffer_name").get<std::string>()));
    } else if (kind == "tensor_constant") {
      state_slots.emplace_back(slot(value), state_index(name + "." + v->at("tensor_constant_name").get<std::string>()));
    } else if (kind == "user_input") {
      if (images_slot >= 0) throw ExportedProgramError("its forward takes more than one input; want forward(images)");
      images_slot = slot(value);
      for (const auto& size : graph.at("tensor_values").at(value).at("sizes"))
        input_dims.push_back(dim_of(size, ranges));
    } else {
      throw ExportedProgramError(fmt::format("its {} graph takes an input of kind {}", name, kind));
    }
  }
  if (images_slot < 0) throw ExportedProgramError("its forward takes no input; want forward(images)");
}

void ExportedProgram::Compiled::set_outputs(const json& signature) {
  for (const auto& spec : signature.at("output_specs")) {
    const auto [kind, v] = union_of(spec);
    if (kind != "user_output" && kind != "loss_output") {
      // buffer_mutation and the like come from a functionalised graph; the training IR mutates
      // buffers in place (aten.add_, batch_norm's running statistics).
      throw ExportedProgramError(fmt::format(
          "its {} graph returns a {} (a functionalised graph): export it with scripts/export_model.py --format pt2",
          name, kind));
    }
    if (output_slot >= 0) continue;  // the logits are the first output
    const auto [k, t] = union_of(v->at("arg"));
    if (k != "as_tensor")
      throw ExportedProgramError(fmt::format("its {} graph's first output is {}, not logits", name, k));
    output_slot = existing(t->at("name").get<std::string>());
  }
  if (output_slot < 0) throw ExportedProgramError(fmt::format("its {} graph returns nothing", name));
}

void ExportedProgram::Compiled::mark_last_uses() {
  std::vector<int> last(slots, -1);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const auto& a : steps[i].arguments) {
      if (a.slot >= 0) last[a.slot] = static_cast<int>(i);
      for (const auto& item : a.items) {
        if (item.first >= 0) last[item.first] = static_cast<int>(i);
      }
    }
  }
  for (int s = 0; s < static_cast<int>(slots); ++s) {
    if (last[s] >= 0 && s != output_slot) steps[last[s]].last_uses.push_back(s);
  }
  for (auto& step : steps) {  // a value nothing reads (add_'s result) goes at once
    for (const auto& out : step.outputs) {
      for (int s : out) {
        if (last[s] < 0 && s != output_slot) step.last_uses.push_back(s);
      }
    }
  }
}

ExportedProgram::ExportedProgram(const std::string& name, const json& model, const std::vector<ExportedTensor>& state,
                                 const std::vector<std::string>& allowed_ops)
    : compiled_(std::make_unique<Compiled>()) {
  Compiled& c = *compiled_;
  c.name = name;
  c.allowed_ops = allowed_ops;
  try {
    const json& graph_module = model.at("graph_module");
    const json& graph = graph_module.at("graph");
    c.set_inputs(graph_module.at("signature"), graph, model.value("range_constraints", json::object()), state);
    for (const auto& node : graph.at("nodes")) c.add_node(node);
    c.set_outputs(graph_module.at("signature"));
    c.mark_last_uses();
  } catch (const ExportedProgramError&) {
    throw;
  } catch (const json::exception& e) {
    throw ExportedProgramError(fmt::format("its {} graph is malformed: {}", name, e.what()));
  } catch (const std::exception& e) {  // an enum serde_types.h does not know
    throw ExportedProgramError(fmt::format("its {} graph has a {}", name, e.what()));
  }
}

ExportedProgram::~ExportedProgram() = default;
ExportedProgram::ExportedProgram(ExportedProgram&&) noexcept = default;

std::size_t ExportedProgram::ops() const { return compiled_->steps.size(); }

const std::vector<ExportedProgram::Dim>& ExportedProgram::input_dims() const { return compiled_->input_dims; }

torch::Tensor ExportedProgram::run(const std::vector<torch::Tensor>& state, const torch::Tensor& images) const {
  const Compiled& c = *compiled_;
  bool fits = images.dim() == static_cast<std::int64_t>(c.input_dims.size());
  for (std::size_t d = 0; fits && d < c.input_dims.size(); ++d) {
    const auto size = images.size(static_cast<std::int64_t>(d));
    fits = c.input_dims[d].min <= size && size <= c.input_dims[d].max;
  }
  if (!fits) {  // outside the ranges the export proved its graph for
    throw ExportedProgramError(fmt::format("the {} program takes images {}, not [{}]", c.name, dims_text(c.input_dims),
                                           fmt::join(images.sizes(), ",")));
  }
  std::vector<c10::IValue> env(c.slots);
  for (const auto& [slot, index] : c.state_slots) env[slot] = state[index];
  env[c.images_slot] = images;
  torch::jit::Stack stack;
  for (const Step& step : c.steps) {
    stack.clear();
    for (const auto& a : step.arguments) stack.push_back(a.get(env, images));
    if (step.op) {
      step.op->callBoxed(stack);
    } else {
      stack = {step.int_op(stack.at(0).toInt(), stack.at(1).toInt())};
    }
    for (std::size_t i = 0; i < step.outputs.size(); ++i) {
      const auto& slots = step.outputs[i];
      if (slots.size() == 1 && !stack.at(i).isList()) {
        env[slots[0]] = std::move(stack[i]);
      } else if (!slots.empty()) {
        const auto list = stack.at(i).toList();
        for (std::size_t k = 0; k < slots.size(); ++k) env[slots[k]] = list.get(k);
      }
    }
    for (int s : step.last_uses) env[s] = c10::IValue();
  }
  return env[c.output_slot].toTensor();
}

}  // namespace tipbench::models
