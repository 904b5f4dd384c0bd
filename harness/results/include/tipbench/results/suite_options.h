// Options a suite declares where it is defined (`tipbench run --NAME`), so a tip with a flag
// touches one file: the CLI adds, checks and documents every declared option (`tipbench list
// --options`), and the run hands the values to every suite as text. Example:
//   inline const tipbench::SuiteOption kBucketMb{.name = "bucket-mb", .type = tipbench::OptionType::number,
//       .default_value = "25", .help = "gradient bucket size in MB", .min = 0.001, .max = 4096};
//   double mb = kBucketMb.number(context.options);   // 25 unless the run said otherwise
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tipbench {

// name (without dashes) -> value as text, as the command line gave it.
using SuiteOptionValues = std::map<std::string, std::string>;

enum class OptionType {
  flag,    // --name, no value: "true" when given
  text,    // --name VALUE
  number,  // --name X, a real number in [min, max]
  choice,  // --name ONE_OF_CHOICES
};
std::string_view to_string(OptionType type);  // "flag", "text", "number", "choice"

struct SuiteOption {
  std::string name;  // "bucket-mb": the flag is --bucket-mb
  OptionType type = OptionType::text;
  std::string default_value;         // as text: "" / "false" / "25" / "skip"
  std::string help;                  // one sentence, without the suite's name (the CLI adds it)
  std::vector<std::string> choices;  // choice only
  double min = 0;                    // number only: the accepted range, inclusive
  double max = 0;
  // text only: why a value is not acceptable ("" when it is), e.g. a recipe that does not parse:
  // the CLI asks before any work, so bad input never gets as far as a started run.
  std::function<std::string(const std::string&)> check;

  // The value in a run's options, or the default when the run did not set it. Throws
  // std::invalid_argument when the text does not parse (the CLI checks it first).
  std::string text(const SuiteOptionValues& values) const;
  bool flag(const SuiteOptionValues& values) const;
  double number(const SuiteOptionValues& values) const;
  // Why `value` is not acceptable for this option ("" when it is): the range and the choices, and
  // `check` unless the value is the default (a recorded run's options hold every default).
  std::string problem(const std::string& value) const;
  // The same for a value typed on the command line: `check` applies to the default's text too.
  std::string given_problem(const std::string& value) const;
};

}  // namespace tipbench
