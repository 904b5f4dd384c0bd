// The report page: head, escaped summary tables, the model as JSON, Chart.js and the page script
// inlined, so the file opens offline.
#include "tipbench/reports/html_report.h"

#include "advice_section.h"
#include "findings_section.h"
#include "why_section.h"
#include "html_script.h"
#include "tipbench/common/escape.h"
#include "tipbench/reports/format.h"
#include "tipbench/common/sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tipbench::reports {

namespace {

std::string run_table(const std::vector<NamedRun>& runs) {
  std::string h =
      "<table><tr><th>run</th><th>fingerprint</th><th>device</th><th>time (UTC)</th><th>git</th>"
      "<th>tipbench</th><th>blocks</th></tr>\n";
  for (const auto& r : runs) {
    const auto& ctx = r.result.context;
    // A merged run: its builds and times are its parts' (builds_table), not the first file's.
    const auto builds = builds_of(r);
    const std::string git = builds.size() == 1 ? builds.front() : fmt::format("{} builds (below)", builds.size());
    std::string time = ctx.timestamp_utc;
    if (!r.parts.empty()) {
      const auto [lo, hi] = std::minmax_element(r.parts.begin(), r.parts.end(), [](const auto& a, const auto& b) {
        return a.timestamp_utc < b.timestamp_utc;
      });
      time = lo->timestamp_utc + " to " + hi->timestamp_utc;
    }
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td></tr>\n",
        html_escape(r.label), html_escape(ctx.fingerprint_slug), html_escape(ctx.device), html_escape(time),
        html_escape(git), html_escape(ctx.tipbench_version),
        fixed_blocks(ctx.settings) ? fmt::format("{}", ctx.settings.blocks)
                                   : fmt::format("{}&ndash;{}", ctx.settings.min_blocks, ctx.settings.blocks));
  }
  h += "</table>\n";
  for (const auto& r : runs) h += detail::builds_table(r);
  return h;
}

std::string warnings(const std::vector<NamedRun>& runs) {
  std::string h;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto banner = injected_slowdown_banner(runs[i].result);
    if (!banner.empty())
      h += fmt::format("<p class=warn>{}: {}</p>\n", html_escape(runs[i].label), html_escape(banner));
    if (i > 0) {
      const auto& a = runs[0].result.context.fingerprint;
      const auto& b = runs[i].result.context.fingerprint;
      const auto changes = fingerprint_changes_text(a, b);
      // Same hardware, other software: a stack A/B, and the software is what is being compared.
      const char* what = same_hardware(a, b) ? "Change under test" : "Different fingerprint";
      if (!changes.empty()) {
        h += fmt::format("<p class=note><b>{}</b>, {} vs {}: {}</p>\n", what, html_escape(runs[i].label),
                         html_escape(runs[0].label), html_escape(changes));
      }
    }
    for (const auto& w : runs[i].result.context.warnings) {
      h += fmt::format("<p class=note>{}: warning: {}</p>\n", html_escape(runs[i].label), html_escape(w));
    }
  }
  return h;
}

// "aten::addmm 1.234 ms (2x) · ..." per step.
std::string top_ops_text(const std::vector<OpTime>& ops) {
  std::string text;
  for (const auto& op : ops) {
    if (!text.empty()) text += " \u00b7 ";
    text += fmt::format("{} {:.3f} ms ({}x)", op.name, op.self_ms_per_step, op.calls_per_step);
  }
  return text;
}

// The arm's profile: a link to its trace (relative to the page) and the ops with the most self time.
std::string profile_row(const ArmProfile& p, const std::string& page_dir) {
  if (!p.error.empty())
    return fmt::format("<tr><td colspan=7 class=note>profile: not written: {}</td></tr>\n", html_escape(p.error));
  namespace fs = std::filesystem;
  std::string href = p.trace_file;
  if (!page_dir.empty()) href = fs::absolute(p.trace_file).lexically_relative(fs::absolute(page_dir)).generic_string();
  href = url_path(href);  // a path, never a scheme: "javascript:..." stays a file name
  std::string h = fmt::format(
      "<tr><td colspan=7 class=note>profile ({} steps, <a href=\"{}\">trace</a>): top CPU ops by self "
      "time per step: {}",
      p.steps, html_escape(href), html_escape(top_ops_text(p.top_cpu_ops)));
  if (!p.top_cuda_kernels.empty()) h += "; top CUDA kernels: " + html_escape(top_ops_text(p.top_cuda_kernels));
  return h + "</td></tr>\n";
}

std::string arm_tables(const NamedRun& run, const std::string& page_dir) {
  std::string h = fmt::format("<h2>Arms of {}</h2>\n", html_escape(run.label));  // "12 runs" when merged
  for (const auto& suite : run.result.suites) {
    h += fmt::format("<h3>{}</h3><p class=note>{}</p>\n", html_escape(suite.name), html_escape(suite.description));
    if (const auto claim = source_claim_line(suite); !claim.empty()) {
      h += fmt::format("<p class=claim>{}</p>\n", html_escape(claim));
    }
    h += "<table><tr><th>arm</th><th>status</th><th>step ms (median)</th><th>p10-p90</th><th>samples/s</th>"
         "<th>CV</th><th>peak memory</th></tr>\n";
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok) {
          h += fmt::format("<tr><td>{}</td><td>{}</td><td colspan=5>{}</td></tr>\n", html_escape(arm.name),
                           to_string(arm.status), html_escape(arm.reason));
          continue;
        }
        const auto& s = arm.step_time_ms;
        h += fmt::format(
            "<tr><td>{}{}</td><td>ok</td><td class=num>{:.3f}</td><td class=num>{:.3f}-{:.3f}</td><td "
            "class=num>{:.1f}</td>"
            "<td class=num>{}</td><td class=num>{}</td></tr>\n",
            html_escape(arm.name), arm.baseline ? " (baseline)" : "", s.median, s.p10, s.p90,
            arm.throughput_samples_per_s.median, percent(arm.throughput_samples_per_s.cv),
            arm.peak_memory_bytes ? human_bytes(*arm.peak_memory_bytes) : "-");
        if (arm.profile) h += profile_row(*arm.profile, page_dir);
      }
      for (const auto& cmp : c.comparisons) {
        h += fmt::format("<tr><td colspan=7 class=note>{} vs {}: {} {} {}{}</td></tr>\n", html_escape(cmp.treatment),
                         html_escape(cmp.baseline), html_escape(metric_label(cmp.metric)), ratio_with_ci(cmp),
                         html_escape(verdict_label(cmp)), cmp.noisy ? " [noisy]" : "");
      }
    }
    h += "</table>\n";
    for (const auto& note : suite.notes) h += fmt::format("<p class=note>{}</p>\n", html_escape(note));
  }
  return h;
}

}  // namespace

std::string default_chartjs_path() {
  const char* env = std::getenv("TIPBENCH_CHARTJS");
  return (env != nullptr && *env != '\0') ? env : kDefaultChartJs;
}

std::string read_chartjs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(
        fmt::format("{}: Chart.js not found; install Debian's libjs-chart.js (apt-get install "
                    "libjs-chart.js, or scripts/bootstrap.sh) or pass --chartjs PATH",
                    path));
  }
  std::ostringstream s;
  s << in.rdbuf();
  std::string js = s.str();
  if (js.find("Chart") == std::string::npos) throw InputError(path + ": does not look like Chart.js");
  // Inside <script>, only "</script" (and "<!--") could end or alter the element.
  for (std::size_t at = js.find("</"); at != std::string::npos; at = js.find("</", at + 3)) js.replace(at, 2, "<\\/");
  for (std::size_t at = js.find("<!--"); at != std::string::npos; at = js.find("<!--", at + 5))
    js.replace(at, 4, "<\\!--");
  return js;
}

std::string render_html(const nlohmann::json& model, const std::vector<NamedRun>& runs,
                        const std::string& chartjs_source, const std::string& page_dir, const Advice* advice) {
  const std::string title = model.value("title", "tipbench report");
  std::string h = "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n";
  // The two scripts run by their hashes, nothing else inline: no injected <script> and no
  // javascript: link could run, whatever escaping missed (docs/security.md).
  const std::string chart_script = "\n" + chartjs_source + "\n";
  const std::string page_script = detail::kReportScript;
  const auto hash = [](const std::string& s) {
    return sha256_base64({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
  };
  h += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-{}' "
      "'sha256-{}'; style-src 'unsafe-inline'; img-src data:\">\n",
      hash(chart_script), hash(page_script));
  h += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", html_escape(title), detail::kReportStyle);
  h += fmt::format("<h1>{}</h1>\n", html_escape(title));
  // A page about one run (or one machine's campaign) says what its claims came to first.
  if (runs.size() == 1) h += detail::findings_section(runs.front());
  h += warnings(runs);
  h += "<h2>Runs</h2>\n" + run_table(runs);
  if (advice) h += detail::advice_section(*advice);
  h += "<h2>Charts</h2>\n<div id=charts></div>\n";
  if (model.at("charts").empty()) h += "<p class=note>No chart has data in these runs.</p>\n";
  if (model.contains("why")) h += detail::why_section(model.at("why"));
  for (const auto& r : runs) h += arm_tables(r, page_dir);
  h += "<p class=note>Ratios are geometric means of the per-block ratios with 95% t-intervals (results "
       "before schema 1.7: ratios of medians with bootstrap intervals); see docs/measurement.md and "
       "docs/reports.md in the tipbench repository.</p>\n";
  h += "<script type=\"application/json\" id=\"tipbench-model\">" + json_for_script(model) + "</script>\n";
  h += "<script>" + chart_script + "</script>\n";
  h += "<script>" + page_script + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace tipbench::reports
