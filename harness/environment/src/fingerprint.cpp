// The fingerprint as a record: its field list, slug, differences and JSON form. No LibTorch
// here (collection lives in fingerprint.cpp), so results can be read without a device.
#include "tipbench/environment/fingerprint.h"

#include "tipbench/common/error_text.h"

#include "tipbench/common/text.h"
#include "tipbench/common/json_number.h"

#include <algorithm>
#include <regex>
#include <string_view>
#include <utility>

namespace tipbench {
namespace {

using detail::to_lower;

// ---------------------------------------------------------------------------------------------
// One list of fields, visited in parallel over one or more objects: to_json, from_json and
// fingerprint_differences all walk it, so a new field cannot be forgotten in one of them.

template <class F, class... G>
void visit_gpu_fields(F&& f, G&... g) {
  f("index", g.index...);
  f("name", g.name...);
  f("compute_capability", g.compute_capability...);
  f("memory_bytes", g.memory_bytes...);
  f("multiprocessors", g.multiprocessors...);
}

// Every Fingerprint field except gpus, which is a list and handled on its own.
template <class F, class... Fp>
void visit_scalar_fields(F&& f, Fp&... fp) {
  f("driver_version", fp.driver_version...);
  f("cuda_runtime_version", fp.cuda_runtime_version...);
  f("cuda_driver_api_version", fp.cuda_driver_api_version...);
  f("cudnn_version", fp.cudnn_version...);
  f("nccl_version", fp.nccl_version...);
  f("libtorch_version", fp.libtorch_version...);
  f("cpu_model", fp.cpu_model...);
  f("cpu_cores", fp.cpu_cores...);
  f("os", fp.os...);
  f("compiler", fp.compiler...);
  f("build_type", fp.build_type...);
}

// [a-z0-9.] kept (lowercased); every other run of characters becomes one '-', none at the ends.
// '_' never appears: the slug uses it to separate its parts.
std::string slug_part(std::string_view s) {
  std::string out;
  bool pending_dash = false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      out += static_cast<char>(std::tolower(u));
    } else if (c == '.') {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      // A leading dot would make a hidden file; ".." must never be a whole path component.
      if (!out.empty() && out.back() != '.') out += '.';
    } else {
      pending_dash = true;
    }
  }
  while (!out.empty() && (out.back() == '.' || out.back() == '-')) out.pop_back();
  return out;
}

// "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz" -> "intel-xeon-platinum-8481c",
// "AMD EPYC 9654 96-Core Processor" -> "amd-epyc-9654": marketing marks, the nominal clock and
// words every CPU has are dropped, so the key stays short and names the part.
std::string cpu_slug_part(const std::string& model) {
  static const std::regex noise(R"(\(r\)|\(tm\)|\bcpu\b|\bprocessor\b|\b\d+-core\b|@.*$)");
  return slug_part(std::regex_replace(to_lower(model), noise, " "));
}

}  // namespace

std::string fingerprint_slug(const Fingerprint& fp) {
  std::string device;
  if (fp.gpus.empty()) {
    const std::string model = cpu_slug_part(fp.cpu_model);
    device = "cpu-" + (model.empty() ? std::string("unknown") : model) + "-" + std::to_string(fp.cpu_cores) + "c";
  } else {
    // Each distinct GPU model in order of appearance, with "-xN" when there are several.
    std::vector<std::pair<std::string, int>> models;
    for (const auto& g : fp.gpus) {
      std::string name = slug_part(g.name);
      if (name.empty()) name = "unknown-gpu";
      auto it = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == name; });
      if (it == models.end()) {
        models.emplace_back(std::move(name), 1);
      } else {
        ++it->second;
      }
    }
    for (const auto& [name, count] : models) {
      if (!device.empty()) device += '-';
      device += name;
      if (count > 1) device += "-x" + std::to_string(count);
    }
    const std::string cuda = slug_part(fp.cuda_runtime_version);
    if (!cuda.empty()) device += "_cuda" + cuda;
  }
  const std::string torch = slug_part(fp.libtorch_version);
  return device + "_torch" + (torch.empty() ? std::string("unknown") : torch);
}

std::optional<std::string> slug_identity_problem(const std::string& slug, const Fingerprint& fp) {
  const std::string expected = fingerprint_slug(fp);
  if (slug == expected) return std::nullopt;
  return "its slug says " + abbreviated(slug) + " but its fingerprint gives " + expected;
}

namespace {

std::string as_text(const std::string& v) { return v.empty() ? "none" : v; }
template <class T>
std::string as_text(const T& v) {
  return std::to_string(v);
}

}  // namespace

std::vector<FingerprintChange> fingerprint_changes(const Fingerprint& a, const Fingerprint& b) {
  std::vector<FingerprintChange> changes;
  if (a.gpus.size() != b.gpus.size()) {
    changes.push_back({"gpus", std::to_string(a.gpus.size()), std::to_string(b.gpus.size()), true});
  }
  const std::size_t common = std::min(a.gpus.size(), b.gpus.size());
  for (std::size_t i = 0; i < common; ++i) {
    const std::string prefix = "gpus[" + std::to_string(i) + "].";
    visit_gpu_fields(
        [&](const char* name, const auto& x, const auto& y) {
          if (x != y) changes.push_back({prefix + name, as_text(x), as_text(y), true});
        },
        a.gpus[i], b.gpus[i]);
  }
  visit_scalar_fields(
      [&](const char* name, const auto& x, const auto& y) {
        const std::string_view field = name;
        if (x != y) changes.push_back({name, as_text(x), as_text(y), field == "cpu_model" || field == "cpu_cores"});
      },
      a, b);
  return changes;
}

std::string to_string(const FingerprintChange& change) {
  return change.field + " " + change.before + " -> " + change.after;
}

std::string fingerprint_changes_text(const Fingerprint& a, const Fingerprint& b) {
  std::string text;
  for (const auto& c : fingerprint_changes(a, b)) text += (text.empty() ? "" : ", ") + to_string(c);
  return text;
}

bool same_hardware(const Fingerprint& a, const Fingerprint& b) {
  const auto changes = fingerprint_changes(a, b);
  return std::none_of(changes.begin(), changes.end(), [](const auto& c) { return c.hardware; });
}

std::vector<std::string> fingerprint_differences(const Fingerprint& a, const Fingerprint& b) {
  std::vector<std::string> names;
  for (const auto& c : fingerprint_changes(a, b)) names.push_back(c.field);
  return names;
}

void to_json(nlohmann::json& j, const GpuInfo& g) {
  j = nlohmann::json::object();
  visit_gpu_fields([&](const char* name, const auto& value) { j[name] = value; }, g);
}

void from_json(const nlohmann::json& j, GpuInfo& g) {
  visit_gpu_fields([&](const char* name, auto& value) { json_get_to(j.at(name), value, name); }, g);
}

void to_json(nlohmann::json& j, const Fingerprint& fp) {
  j = nlohmann::json::object();
  j["gpus"] = fp.gpus;
  visit_scalar_fields([&](const char* name, const auto& value) { j[name] = value; }, fp);
}

void from_json(const nlohmann::json& j, Fingerprint& fp) {
  j.at("gpus").get_to(fp.gpus);
  visit_scalar_fields([&](const char* name, auto& value) { json_get_to(j.at(name), value, name); }, fp);
}

}  // namespace tipbench
