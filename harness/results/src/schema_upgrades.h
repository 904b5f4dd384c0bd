// Internal: what reading a result of an older minor version of the schema fills in or corrects, so
// that every reader sees today's meaning (docs/result-schema.md, "Versions").
#pragma once

#include "tipbench/results/result.h"

namespace tipbench::detail {

// A result's recorded settings: keys a newer minor version added are ignored (a result is a
// record; settings given as input stay strict), and those an older one lacked get their meaning then.
MeasureSettings settings_known_keys(const nlohmann::ordered_json& j);

// The verdicts of a result written before 1.9, in today's words.
void upgrade_verdicts_before_1_9(Result& r);

}  // namespace tipbench::detail
