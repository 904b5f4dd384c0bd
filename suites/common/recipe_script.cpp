#include "recipe_script.h"

#include "tipbench/common/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace tipbench::suites {

namespace {

// Lines of one slot, each marked with the ingredient that contributed it.
std::string marked(const std::vector<const Ingredient*>& ingredients, const std::vector<std::string> PythonLines::*slot,
                   const std::string& indent) {
  std::string out;
  for (const auto* ingredient : ingredients) {
    for (const auto& line : ingredient->python.*slot)
      out += fmt::format("{}{}  # {}\n", indent, line, ingredient->key());
  }
  return out;
}

std::string joined_kwargs(const std::vector<const Ingredient*>& ingredients,
                          const std::vector<std::string> PythonLines::*slot) {
  std::string out;
  for (const auto* ingredient : ingredients) {
    for (const auto& kwarg : ingredient->python.*slot) out += ", " + kwarg;
  }
  return out;
}

// The ingredients that filled a slot, as a comment: "conv_bias:no_bias, inplace:inplace".
std::string marks_of(const std::vector<const Ingredient*>& ingredients,
                     const std::vector<std::string> PythonLines::*slot) {
  std::string out;
  for (const auto* ingredient : ingredients) {
    if ((ingredient->python.*slot).empty()) continue;
    out += (out.empty() ? "" : ", ") + ingredient->key();
  }
  return out;
}

// The one value of a single-valued slot and the mark of the ingredient that set it ("" when none
// did); two ingredients setting it differently cannot go together.
std::pair<std::string, std::string> single(const std::vector<const Ingredient*>& ingredients,
                                           std::string PythonLines::*slot) {
  std::string value, mark;
  for (const auto* ingredient : ingredients) {
    const auto& own = ingredient->python.*slot;
    if (own.empty()) continue;
    if (!value.empty() && value != own) throw std::invalid_argument("two ingredients set " + value + " and " + own);
    value = own;
    mark = "  # " + ingredient->key();
  }
  return {value, mark};
}

// The tips a script line is marked with: "code  # amp:bf16, tf32" -> {"amp:bf16", "tf32"}
// (recipe_script.cpp writes the marks so); none for a line without a trailing mark.
std::vector<std::string> marks_of_line(const std::string& line) {
  const std::string lead = "  # ";
  const auto at = line.rfind(lead);
  if (at == std::string::npos) return {};
  std::vector<std::string> marks;
  std::istringstream list(line.substr(at + lead.size()));
  std::string mark;
  while (std::getline(list, mark, ',')) {
    const auto first = mark.find_first_not_of(' ');
    if (first != std::string::npos) marks.push_back(mark.substr(first));
  }
  return marks;
}

}  // namespace

std::string recipe_script(const std::vector<const Ingredient*>& ingredients, const ScriptOptions& options) {
  std::string out = "#!/usr/bin/env python3\n";
  // The header names what was measured, from a result file: one line each, whatever it holds.
  for (const auto& line : options.header) out += "# " + python_comment(line) + "\n";
  out +=
      "# Lines marked `# tip:arm` apply that tip; the rest is a plain PyTorch training loop. make_model\n"
      "# and batches stand in for your model and DataLoader.\n";
  for (const auto* ingredient : ingredients) {
    for (const auto& comment : ingredient->python.comments)
      out += fmt::format("# {}: {}\n", ingredient->key(), comment);
  }
  out +=
      "import argparse\n"
      "import contextlib\n"
      "import os\n\n"
      "import torch\n"
      "from torch import nn\n\n";
  out += fmt::format(
      "parser = argparse.ArgumentParser()\n"
      "parser.add_argument(\"--device\", default=\"{}\")\n"
      "parser.add_argument(\"--steps\", type=int, default=3)\n"
      "args = parser.parse_args()\n\n",
      options.device);
  out += marked(ingredients, &PythonLines::setup, "");
  out +=
      "device = torch.device(args.device)\n\n\n"
      "def make_model(conv_bias=True, inplace=False):\n"
      "    layers, channels = [], 3\n"
      "    for width in (16, 32):\n"
      "        layers += [nn.Conv2d(channels, width, 3, stride=2, padding=1, bias=conv_bias),\n"
      "                   nn.BatchNorm2d(width), nn.ReLU(inplace=inplace)]\n"
      "        channels = width\n"
      "    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))\n\n\n"
      "def batches(steps, batch=8):\n"
      "    for _ in range(steps):\n"
      "        yield torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))\n\n\n";
  std::string model_kwargs = joined_kwargs(ingredients, &PythonLines::model_kwargs);
  if (!model_kwargs.empty()) model_kwargs = model_kwargs.substr(2);
  out += fmt::format("model = make_model({}).to(device){}\n", model_kwargs,
                     model_kwargs.empty() ? "" : "  # " + marks_of(ingredients, &PythonLines::model_kwargs));
  out += marked(ingredients, &PythonLines::model, "");
  const std::string optimizer_kwargs = joined_kwargs(ingredients, &PythonLines::optimizer_kwargs);
  out += fmt::format("optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9{}){}\n", optimizer_kwargs,
                     optimizer_kwargs.empty() ? "" : "  # " + marks_of(ingredients, &PythonLines::optimizer_kwargs));
  const bool scaler =
      std::any_of(ingredients.begin(), ingredients.end(), [](const Ingredient* i) { return i->python.grad_scaler; });
  std::string scaler_mark;
  for (const auto* i : ingredients) {
    if (i->python.grad_scaler) scaler_mark = "  # " + i->key();
  }
  out +=
      fmt::format("scaler = torch.amp.GradScaler(device.type, enabled={}){}\n", scaler ? "True" : "False", scaler_mark);
  const auto [dtype, dtype_mark] = single(ingredients, &PythonLines::autocast_dtype);
  const std::string autocast =
      dtype.empty() ? "contextlib.nullcontext()" : fmt::format("torch.autocast(device.type, dtype={})", dtype);
  out += "model.train()\n";
  out += "for images, labels in batches(args.steps):\n";
  out += "    images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)\n";
  out += marked(ingredients, &PythonLines::batch, "    ");
  out += "    optimizer.zero_grad(set_to_none=True)\n";
  out += fmt::format("    with {}:{}\n", autocast, dtype_mark);
  out += "        loss = nn.functional.cross_entropy(model(images), labels)\n";
  out += "    scaler.scale(loss).backward()\n";
  out += "    scaler.step(optimizer)\n";
  out += "    scaler.update()\n";
  out += "model.eval()\n";
  const auto [eval_context, eval_mark] = single(ingredients, &PythonLines::eval_context);
  out += fmt::format("with {}:{}\n", eval_context.empty() ? "torch.no_grad()" : eval_context, eval_mark);
  out += "    logits = model(images)\n";
  out +=
      "print(f\"recipe ran {args.steps} steps on {device}: loss {loss.item():.3f}, logits {tuple(logits.shape)}\")\n";
  return out;
}

std::string lines_applying(const std::string& script, const std::vector<std::string>& keys) {
  std::istringstream in(script);
  std::string line, out;
  while (std::getline(in, line)) {
    const auto marks = marks_of_line(line);
    const bool ours = std::any_of(keys.begin(), keys.end(), [&](const std::string& key) {
      return std::find(marks.begin(), marks.end(), key) != marks.end();
    });
    if (ours) out += line + "\n";
  }
  return out;
}

std::vector<std::string> notes_of(const std::string& script, const std::vector<std::string>& keys) {
  std::istringstream in(script);
  std::string line;
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    for (const auto& key : keys) {
      if (line.starts_with("# " + key + ": ")) out.push_back(line.substr(2));
    }
  }
  return out;
}

}  // namespace tipbench::suites
