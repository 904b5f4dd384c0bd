#include "run_options.h"

#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"

namespace tipbench::cli {

SuiteContext suite_context_from(const RunOptions& o, const c10::Device& device) {
  return {.device = device,
          .models = o.models,
          .batch_size = o.batch_size,
          .seed = o.seed,
          .quick = o.quick,
          .options = o.suite_options,
          .process_setup = nullptr};
}

SuiteOptionValues default_suite_options() {
  SuiteOptionValues values;
  for (const auto& declared : declared_options()) values[declared.option.name] = declared.option.default_value;
  return values;
}

RunOptionCatalogue run_option_catalogue() {
  RunOptionCatalogue c;
  c.suites = suite_names();
  for (const auto& m : models::available_models()) c.models.push_back(m.name);
  for (const auto& declared : declared_options()) c.options.push_back(declared.option);
  return c;
}

}  // namespace tipbench::cli
