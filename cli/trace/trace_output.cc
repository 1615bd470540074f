#include "cli/trace/trace_output.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/enum_names.h"
#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

using nlohmann::json;

constexpr EnumName<probes::TracedPattern> kPatternNames[] = {
    {probes::TracedPattern::kSequential, "sequential"},
    {probes::TracedPattern::kBackward, "backward"},
    {probes::TracedPattern::kRandom, "random"}};
static_assert(NamesEveryValue<kPatternNames>());

std::string_view PatternName(probes::TracedPattern p) {
  return NameIn<probes::TracedPattern>(kPatternNames, p);
}

std::string StepName(const probes::TracedAccess& a) {
  return fmt::format("{} {}", a.write ? "write" : "read", PatternName(a.pattern));
}

std::string SettingsText(const probes::WhatIfSettings& s) {
  return fmt::format("{} KiB direct requests, {} in flight ({})", s.larger_request / 1024,
                     s.larger_depth, probes::ToString(s.larger_engine));
}

// The traced run's reads beside their cold replay, and what it means when
// they were much faster.
void AppendTracedReads(std::string& out, const WhatIfOutcome& f) {
  if (f.traced_read_seconds <= 0 || f.as_traced_read_seconds <= 0) return;
  out += fmt::format("  the traced run read it in {:.4f} s, the cold replay as traced in {:.4f} s",
                     f.traced_read_seconds, f.as_traced_read_seconds);
  if (f.page_cache) {
    out +=
        ":\n  the page cache served the program; the ratio compares two cold replays, not the "
        "program's own run";
  }
  out += '\n';
}

void AppendWhatIfFile(std::string& out, const WhatIfOutcome& f) {
  out += fmt::format("{} ({} bytes", TerminalText(f.path), f.size);
  if (f.probe_size != 0) out += fmt::format(", probe file {} bytes", f.probe_size);
  out += ")\n";
  if (!f.steps.empty()) {
    out += fmt::format("  {:<18} {:>10} {:>10} {:>14} {:>12} {:>12}\n", "step", "requests",
                       "req size", "bytes", "as traced", "larger");
    for (const probes::WhatIfStep& s : f.steps) {
      out +=
          fmt::format("  {:<18} {:>10} {:>10} {:>14} {:>10.4f} s {:>10.4f} s{}\n",
                      StepName(s.access), s.access.requests, s.as_traced.block_size, s.access.bytes,
                      s.as_traced_seconds, s.larger_seconds,
                      s.access.pattern == probes::TracedPattern::kRandom ? "  (same: random)" : "");
    }
    out += fmt::format("  {:<18} {:>10} {:>10} {:>14} {:>10.4f} s {:>10.4f} s  ratio {:.2f}\n",
                       "total", "", "", "", f.totals.as_traced_seconds, f.totals.larger_seconds,
                       f.totals.ratio);
    AppendTracedReads(out, f);
  }
  if (!f.skipped.empty()) out += fmt::format("  not replayed: {}\n", TerminalText(f.skipped));
}

// The traced program chose its file names (and the name of its binary):
// the text report shows them escaped, the JSON as they are.
trace::ProcessTrace ForTerminal(trace::ProcessTrace process) {
  process.program = TerminalText(process.program);
  for (trace::TracedFile& file : process.files) file.path = TerminalText(file.path);
  return process;
}

json StepJson(const probes::WhatIfStep& s) {
  return json{
      {"direction", s.access.write ? "write" : "read"},
      {"pattern", PatternName(s.access.pattern)},
      {"requests", s.access.requests},
      {"bytes", s.access.bytes},
      {"as_traced",
       {{"job", probes::JobFingerprint(s.as_traced)}, {"seconds", s.as_traced_seconds}}},
      {"larger", {{"job", probes::JobFingerprint(s.larger)}, {"seconds", s.larger_seconds}}}};
}

json WhatIfFileJson(const WhatIfOutcome& f) {
  json j{{"path", f.path}, {"size", f.size}, {"probe_size", f.probe_size}};
  json steps = json::array();
  for (const probes::WhatIfStep& s : f.steps) steps.push_back(StepJson(s));
  j["steps"] = std::move(steps);
  j["as_traced_seconds"] = f.totals.as_traced_seconds;
  j["larger_seconds"] = f.totals.larger_seconds;
  j["ratio"] = f.totals.ratio;
  if (f.traced_read_seconds > 0) {
    j["traced"] = {{"read_seconds", f.traced_read_seconds},
                   {"as_traced_read_seconds", f.as_traced_read_seconds},
                   {"page_cache", f.page_cache}};
  }
  if (!f.skipped.empty()) j["skipped"] = f.skipped;
  return j;
}

constexpr std::string_view kNoReportWhy =
    "it ended by a signal or _exit(), exec'd a program the library does not follow (static or "
    "set-user-ID), or could not write its report (no descriptor left, or the trace file out of "
    "its reach: a chroot, another mount namespace)";

void AppendUnreported(std::string& out, const trace::StartedProcess& p) {
  out += fmt::format("iowatch trace: pid {} (parent {}) {} wrote no report: {}\n", p.pid,
                     p.parent_pid, TerminalText(p.program), kNoReportWhy);
}

}  // namespace

std::string TraceText(const TraceRun& run) {
  std::string out;
  for (const auto& process : run.processes) {
    out += trace::FormatTraceText(ForTerminal(process));
  }
  for (const auto& missing : run.unreported) AppendUnreported(out, missing);
  if (run.processes.empty() && run.unreported.empty()) {
    out +=
        "iowatch trace: no traced process was seen: the library was not loaded (a static or "
        "set-user-ID program), or could not write to the trace file\n";
  }
  if (!run.what_if) return out;
  out += fmt::format("\nWhat if: {}, on a scratch file beside each traced file\n",
                     SettingsText(run.what_if_settings));
  for (const WhatIfOutcome& f : run.what_if_files) AppendWhatIfFile(out, f);
  return out;
}

std::string TraceJson(const TraceRun& run) {
  json processes = json::array();
  for (const auto& process : run.processes) {
    processes.push_back(json::parse(trace::TraceJsonLine(process)));
  }
  json unreported = json::array();
  for (const auto& p : run.unreported) {
    unreported.push_back(json{{"pid", p.pid},
                              {"parent_pid", p.parent_pid},
                              {"program", p.program},
                              {"why", kNoReportWhy}});
  }
  json doc{{"command", run.command},
           {"exit_status", run.exit_status},
           {"processes", std::move(processes)},
           {"unreported", std::move(unreported)}};
  if (run.what_if) {
    json files = json::array();
    for (const WhatIfOutcome& f : run.what_if_files) files.push_back(WhatIfFileJson(f));
    const probes::WhatIfSettings& s = run.what_if_settings;
    doc["what_if"] = json{{"settings",
                           {{"request_bytes", s.larger_request},
                            {"iodepth", s.larger_depth},
                            {"ioengine", probes::ToString(s.larger_engine)},
                            {"direct", true}}},
                          {"files", std::move(files)}};
  }
  // The command's words and the paths are the user's bytes: U+FFFD for what
  // is not UTF-8 (the library's lines are UTF-8 already).
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace iowatch::daemon
