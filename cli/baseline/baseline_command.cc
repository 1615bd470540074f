#include "cli/baseline/baseline_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <utility>

#include "cli/baseline/baseline_table.h"
#include "cli/baseline/conditions_table.h"
#include "cli/baseline/regressions_text.h"
#include "cli/shared/cli_output.h"
#include "common/file_tree.h"
#include "common/terminal_text.h"
#include "common/whole_file.h"
#include "config/config.h"
#include "probes/store/store_json.h"
#include "probes/verdicts/job_judge.h"

namespace iowatch::daemon {
namespace {

using probes::Baseline;
using probes::BaselineRuns;
using probes::MetricSample;
using probes::RunRecord;
using probes::Store;
using probes::StoredBaseline;

std::string Plural(int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// Import reads its input whole. A baseline export is kilobytes (a few MiB
// for thousands of baselines): past this it is the wrong file, or /dev/zero.
constexpr size_t kMaxImportBytes = size_t{64} << 20;

// A file the user named may be a pipe (`import <(…)`) or a FIFO, which
// fails when nothing writes to it within fifo_wait (30 s) instead of
// waiting for ever; both it and stdin stop at kMaxImportBytes.
constexpr ReadFileOptions kImportRead{.open_error = "cannot open",
                                      .read_error = "cannot read baseline JSON",
                                      .max_bytes = kMaxImportBytes,
                                      .regular_only = false};

Result<std::string> ReadWholeFile(const std::string& path) { return ReadFile(path, kImportRead); }

Result<std::string> ReadStdin() { return ReadDescriptor(STDIN_FILENO, "<stdin>", kImportRead); }

std::string KnownJobs(std::span<const StoredBaseline> baselines) {
  std::vector<std::string> jobs;  // ListBaselines orders by job
  for (const StoredBaseline& s : baselines) {
    const std::string job = TerminalText(s.baseline.job);
    if (jobs.empty() || jobs.back() != job) jobs.push_back(job);
  }
  if (jobs.empty()) return "";
  return fmt::format(" (jobs with a baseline: {})", fmt::join(jobs, ", "));
}

}  // namespace

BaselineContext DefaultBaselineContext(const config::Config& config) {
  BaselineContext context;
  context.now_unix_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  context.read_stdin = ReadStdin;
  context.policy = config.probes.baseline;
  context.local_probes = [config] { return LocalProbesOf(config); };
  context.firmware_of = [sysfs = FileTree(config.sysfs)](std::string_view device) {
    const std::optional<DiskIdentity> disk = DiskIdentityOf(sysfs, device);
    return disk ? disk->firmware : std::string();
  };
  return context;
}

Status BaselineList(const Store& store, std::string& out) {
  Result<std::vector<StoredBaseline>> baselines = store.ListBaselines();
  if (!baselines) return ErrorOf(baselines);
  if (baselines->empty()) {
    out += fmt::format("no baselines in {}\n", store.Path());
    return {};
  }
  out += FormatBaselineList(*baselines);
  return {};
}

// mine[i], one band's baseline, beside the recent runs of its band (runs of
// unknown conditions, never judged, beside the clean one, as before bands);
// after the last band of a series (mine is ordered by series, then band),
// every recent run of the series with why it was judged or not.
Status AppendBandSection(const Store& store, std::span<const StoredBaseline* const> mine, size_t i,
                         uint32_t runs, const probes::BaselinePolicy& policy, std::string& text) {
  const Baseline& b = mine[i]->baseline;
  Result<std::vector<RunRecord>> recent =
      store.RecentRuns(b.job, b.fingerprint, b.device, runs, true);
  if (!recent) return ErrorOf(recent);
  text += FormatBaselineHeader(*mine[i]);
  text += '\n';
  std::vector<RunRecord> own;
  for (const RunRecord& run : *recent) {
    if (probes::Classify(run.conditions, policy.contention).band == b.band) own.push_back(run);
  }
  if (own.empty()) {
    text += fmt::format(
        "  none of the last {} successful runs of these parameters on this device "
        "is of its {}\n\n",
        recent->size(), probes::DescribeBand(b.band));
  } else {
    text += FormatBaselineRuns(&b, own, policy);
  }
  const auto same_series = [&](const StoredBaseline* s) {
    return s->baseline.fingerprint == b.fingerprint && s->baseline.device == b.device;
  };
  if (i + 1 < mine.size() && same_series(mine[i + 1])) return {};
  std::set<int> bands;
  for (const StoredBaseline* s : mine) {
    if (same_series(s)) bands.insert(s->baseline.band);
  }
  Result<std::map<int64_t, probes::StoredRunVerdict>> stored = store.RunVerdictsOf(*recent);
  if (!stored) return ErrorOf(stored);
  text += FormatRunConditions(*recent, policy.contention, bands, *stored);
  return {};
}

Status BaselineShow(const Store& store, std::string_view job, uint32_t runs,
                    const probes::BaselinePolicy& policy, std::string& out) {
  Result<std::vector<StoredBaseline>> all = store.ListBaselines();
  if (!all) return ErrorOf(all);
  Result<std::vector<RunRecord>> latest = store.RecentRuns(job, "", "", 1, true);
  if (!latest) return ErrorOf(latest);
  std::vector<const StoredBaseline*> mine;
  bool latest_has_baseline = false;
  for (const StoredBaseline& s : *all) {
    if (s.baseline.job != job) continue;
    mine.push_back(&s);
    if (!latest->empty() && latest->front().fingerprint == s.baseline.fingerprint &&
        latest->front().device == s.baseline.device) {
      latest_has_baseline = true;
    }
  }
  if (mine.empty() && latest->empty()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no baseline and no successful run of job \"{}\" in {}{}",
                                 TerminalText(job), TerminalText(store.Path()), KnownJobs(*all)));
  }

  std::string text;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (Status shown = AppendBandSection(store, mine, i, runs, policy, text); !shown) {
      return shown;
    }
  }
  // Runs the daemon is still learning from, or whose parameters changed since.
  if (!latest->empty() && !latest_has_baseline) {
    const RunRecord& newest = latest->front();
    Result<std::vector<RunRecord>> recent =
        store.RecentRuns(job, newest.fingerprint, newest.device, runs, true);
    if (!recent) return ErrorOf(recent);
    text += FormatNoBaselineHeader(newest);
    text += '\n';
    text += FormatBaselineRuns(nullptr, *recent, policy);
    Result<std::map<int64_t, probes::StoredRunVerdict>> stored = store.RunVerdictsOf(*recent);
    if (!stored) return ErrorOf(stored);
    text += FormatRunConditions(*recent, policy.contention, {}, *stored);
  }
  if (Status regressions = AppendRegressions(store, job, policy, text); !regressions) {
    return regressions;
  }
  if (!mine.empty()) text += FormatBaselineLegend(policy);
  out += text;
  return {};
}

Status BaselineCapture(Store& store, std::string_view job, uint32_t runs, std::string_view device,
                       int64_t now_unix_ms, const probes::BaselinePolicy& policy,
                       std::string& out) {
  Result<std::vector<RunRecord>> latest = store.RecentRuns(job, "", device, 1, true);
  if (!latest) return ErrorOf(latest);
  if (latest->empty()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no successful run of {}{} in {}", TerminalText(job),
                                 device.empty() ? "" : fmt::format(" on {}", TerminalText(device)),
                                 TerminalText(store.Path())));
  }
  const RunRecord& newest = latest->front();
  Result<std::vector<RunRecord>> chosen =
      store.RunsForBaseline(job, newest.fingerprint, newest.device, runs, BaselineRuns::kLast);
  if (!chosen) return ErrorOf(chosen);
  if (chosen->size() < runs) {
    // Runs of earlier parameters exist but cannot count: say so, or the
    // operator would look for runs the message seems to have missed.
    Result<std::vector<RunRecord>> any = store.RecentRuns(job, "", newest.device, runs, true);
    if (!any) return ErrorOf(any);
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("only {} of {} on {}; need {} (--runs){}",
                    Plural(static_cast<int64_t>(chosen->size()), "successful run"),
                    TerminalText(job), TerminalText(newest.device), runs,
                    any->size() > chosen->size()
                        ? fmt::format("; runs with parameters other than the latest ({}) do "
                                      "not count",
                                      ShortFingerprint(newest.fingerprint))
                        : ""));
  }

  const Baseline baseline = probes::LearnBaseline(*chosen, now_unix_ms, policy);
  if (baseline.metrics.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the last {} of {} on {} measured nothing to learn from",
                                 Plural(runs, "successful run"), TerminalText(job),
                                 TerminalText(newest.device)));
  }
  Result<std::optional<StoredBaseline>> previous =
      store.GetBaseline(job, newest.fingerprint, newest.device);
  if (!previous) return ErrorOf(previous);
  Result<int64_t> id = store.PutBaseline(baseline, /*pinned=*/true);
  if (!id) return ErrorOf(id);
  // The load bands were learned against the old norm: they relearn from the
  // runs after this one (JudgeRun learns after the newest pinned baseline).
  Result<int64_t> bands = store.DeleteLoadBandBaselines(job, newest.fingerprint, newest.device);
  if (!bands) return ErrorOf(bands);

  StoredBaseline stored;
  stored.id = *id;
  stored.pinned = true;
  stored.run_count = static_cast<int64_t>(baseline.run_ids.size());
  stored.baseline = baseline;
  out += FormatBaselineHeader(stored);
  out += '\n';
  out += FormatBaselineChange(baseline, *previous ? &(*previous)->baseline : nullptr);
  if (*bands > 0) {
    out += fmt::format("deleted {}: they relearn from the runs after this capture\n",
                       Plural(*bands, "load-band baseline"));
  }
  return {};
}

Status BaselineReset(Store& store, std::string_view job, std::string& out) {
  Result<int64_t> deleted = store.DeleteBaselines(job);
  if (!deleted) return ErrorOf(deleted);
  if (*deleted == 0) {
    out += fmt::format("no baseline of {} to delete\n", job);
  } else {
    out += fmt::format("deleted {} of {}; the daemon learns anew from its next successful runs\n",
                       Plural(*deleted, "baseline"), job);
  }
  return {};
}

Status BaselinePassiveReset(Store& store, std::string_view disk, int64_t now_unix_ms,
                            std::string& out) {
  Result<int64_t> forgotten = store.ResetPassiveDevice(disk, now_unix_ms);
  if (!forgotten) return ErrorOf(forgotten);
  out += fmt::format(
      "forgot {} of {}; a running daemon learns it afresh within a minute (judged again after an "
      "hour of busy minutes)\n",
      Plural(*forgotten, "passive series"), TerminalText(disk));
  return {};
}

Status BaselineExport(const Store& store, std::string_view file, const BaselineContext& context,
                      std::string& out) {
  Result<std::vector<StoredBaseline>> baselines = store.ListBaselines();
  if (!baselines) return ErrorOf(baselines);
  for (StoredBaseline& b : *baselines) b.firmware = context.firmware_of(b.baseline.device);
  const std::string json = probes::BaselinesToJson(*baselines);
  if (file.empty() || file == "-") {
    out += json;
    return {};
  }
  if (Status written = WriteWholeFile(std::string(file), json); !written) return written;
  out += fmt::format("exported {} to {}\n",
                     Plural(static_cast<int64_t>(baselines->size()), "baseline"), file);
  return {};
}

Status BaselineImport(Store& store, std::string_view file, const BaselineContext& context,
                      std::string& out) {
  const bool from_stdin = file == "-";
  Result<std::string> text = from_stdin ? context.read_stdin() : ReadWholeFile(std::string(file));
  if (!text) return ErrorOf(text);
  const std::string source = from_stdin ? "<stdin>" : std::string(file);
  // The whole document is checked and placed before the first write.
  Result<std::vector<StoredBaseline>> parsed = probes::BaselinesFromJson(*text, source);
  if (!parsed) return ErrorOf(parsed);
  const std::vector<LocalProbe> local = context.local_probes();
  Result<Retargeted> placed = RetargetBaselines(*parsed, local, source);
  if (!placed) return ErrorOf(placed);
  Result<int64_t> imported = store.PinBaselines(placed->baselines);
  if (!imported) return ErrorOf(imported);
  out += fmt::format("imported {} from {} (pinned):\n", Plural(*imported, "baseline"), source);
  for (const std::string& line : placed->placed) out += fmt::format("  {}\n", line);
  for (const std::string& line : placed->skipped) out += fmt::format("  skipped {}\n", line);
  return {};
}

Status ExecuteBaseline(const BaselineArgs& args, const BaselineContext& context, std::string& out) {
  if (args.action == BaselineAction::kHelp) {
    out += BaselineUsage();
    return {};
  }
  const std::filesystem::path state_dir =
      args.state_dir.empty() ? config::Config{}.state_dir : args.state_dir;
  const std::filesystem::path db = state_dir / Store::kFileName;
  // Store::Open would create the file: here a missing one is a mistake (a
  // wrong --state.dir), not a store to start. Other stat errors (EACCES) are
  // left for Open to report precisely.
  struct stat info {};
  if (::stat(db.c_str(), &info) != 0 && errno == ENOENT) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no store at {} (has `iowatch serve` run with --state.dir={}?)",
                                 TerminalText(db.string()), TerminalText(state_dir.string())));
  }
  // list, show and export only read: they open the store read-only, so they
  // work on a read-only mount and never migrate or switch a file to WAL.
  const bool writes =
      args.action == BaselineAction::kCapture || args.action == BaselineAction::kReset ||
      args.action == BaselineAction::kPassiveReset || args.action == BaselineAction::kImport;
  Result<Store> store = writes ? Store::Open(db) : Store::OpenReadOnly(db);
  if (!store) return ErrorOf(store);
  switch (args.action) {
    case BaselineAction::kList:
      return BaselineList(*store, out);
    case BaselineAction::kShow:
      return BaselineShow(*store, args.job, args.runs.value_or(kShowRunsDefault), context.policy,
                          out);
    case BaselineAction::kCapture:
      return BaselineCapture(*store, args.job, args.runs.value_or(context.policy.runs), args.device,
                             context.now_unix_ms(), context.policy, out);
    case BaselineAction::kReset:
      return BaselineReset(*store, args.job, out);
    case BaselineAction::kPassiveReset:
      return BaselinePassiveReset(*store, args.disk, context.now_unix_ms(), out);
    case BaselineAction::kExport:
      return BaselineExport(*store, args.file, context, out);
    case BaselineAction::kImport:
      return BaselineImport(*store, args.file, context, out);
    case BaselineAction::kHelp:
      break;
  }
  return {};
}

int RunBaseline(const BaselineArgs& given, std::span<const config::Setting> settings) {
  BaselineArgs args = given;
  config::Config config;
  if (!args.config_file.empty()) {
    auto loaded = config::LoadConfigFile(args.config_file, settings);
    if (!loaded) return ReportError("baseline", loaded.error());
    config = std::move(*loaded);
  }
  // The jobs' relative targets lie under the state directory the store is in.
  if (!args.state_dir.empty()) config.state_dir = args.state_dir;
  args.state_dir = config.state_dir;
  const BaselineContext context = DefaultBaselineContext(config);
  std::string out;
  if (Status done = ExecuteBaseline(args, context, out); !done) {
    const std::string command = fmt::format("baseline {}", BaselineActionName(args.action));
    return ReportError(command.c_str(), done.error());
  }
  if (Status w = WriteStdout(out); !w) {
    return ReportError(fmt::format("baseline {}", BaselineActionName(args.action)).c_str(),
                       w.error());
  }
  return 0;
}

}  // namespace iowatch::daemon
