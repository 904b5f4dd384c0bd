#include "tipbench/suite/registry.h"

#include <algorithm>
#include <stdexcept>

namespace tipbench {

namespace {

// A function-local static: suites register during static initialisation of other files.
std::vector<std::unique_ptr<Suite>>& registry() {
  static std::vector<std::unique_ptr<Suite>> suites;
  return suites;
}

}  // namespace

bool register_suite(std::unique_ptr<Suite> suite) {
  if (find_suite(suite->name()) != nullptr) {
    throw std::logic_error("suite '" + suite->name() + "' registered twice");
  }
  registry().push_back(std::move(suite));
  return true;
}

std::vector<const Suite*> all_suites() {
  std::vector<const Suite*> out;
  for (const auto& s : registry()) out.push_back(s.get());
  return out;
}

const Suite* find_suite(const std::string& name) {
  for (const auto& s : registry()) {
    if (s->name() == name) return s.get();
  }
  return nullptr;
}

std::vector<DeclaredOption> declared_options() {
  std::vector<DeclaredOption> out;
  for (const auto& s : registry()) {
    for (const auto& option : s->options()) {
      auto same =
          std::find_if(out.begin(), out.end(), [&](const DeclaredOption& d) { return d.option.name == option.name; });
      if (same == out.end()) {
        out.push_back({option, {s->name()}});
        continue;
      }
      if (same->option.type != option.type || same->option.default_value != option.default_value ||
          same->option.choices != option.choices) {
        throw std::logic_error("suites " + same->suites.front() + " and " + s->name() + " declare --" + option.name +
                               " differently");
      }
      same->suites.push_back(s->name());
    }
  }
  return out;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> out;
  for (const auto& s : registry()) out.push_back(s->name());
  return out;
}

}  // namespace tipbench
