// Replays a passive recording (record.py's passive-* scenarios: the store's
// passive_windows and events.json) through the daemon's passive judge
// (probes/verdicts/passive/passive_judge.h, default policy) and prints, per
// disk and source, what the judge would have said on that I/O:
//
//   minutes      windows (distinct minutes) of the disk and source
//   eligible     series-windows with >= min_requests requests once the
//                series' model was learned (reason not "learning")
//   judged       the share of those judged (not outside the model)
//   false        raises outside every slowdown window widened by K windows
//   raise_s      from each slowdown's start to the disk's first raise in it
//   clear_s      from each slowdown's end to the clear ("-": not cleared)
//   not as stored  windows whose reason or badness differs from what the
//                daemon stored (its judge held both sources of the disk)
//
// Each source has its own judge per disk (the daemon's judge holds both
// sources of a disk, with passive.shadow_diskstats, and a streak in one
// stops the other learning): the figures are each source's alone, as a
// daemon without the other would judge. A window with no off_unix_ms (a
// recording stopped during its slowdown) lasts to the end; one marked
// "refused" (record.py stopped at a step weaker than it asks) is no
// slowdown. A recording continued in parts (record.py --state-from) is
// replayed as one: its windows are the same series', whatever disk the
// daemon saw in each part.
//
//   replay_passive [--check] [--tsv] [--windows] DIR
//
// --windows: also each judged window of the recording's device by the
// device stage (minutes from the first slowdown's start, the series, its
// rate, observed and predicted mean, ratio, bound, bad).
//
// --check: the goals, for the recording's own device (events.json "device")
// and the device stage: no false alarm, at least 80 % of eligible windows
// judged, every slowdown raised within 5 minutes (15 for passive-bursty and passive-diurnal).
// Exits 1 naming each goal missed. Diskstats' figures are printed, not
// checked.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "probes/store/store.h"
#include "probes/verdicts/passive/passive_judge.h"
#include "tests/bench/verdicts/temporary_database.h"

namespace {

namespace fs = std::filesystem;
using namespace iowatch;
using namespace iowatch::probes;

constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinuteMs = 60'000;

struct Slowdown {
  int64_t on_ms = 0;
  int64_t off_ms = kOpenEnd;
};

struct Recording {
  std::string scenario;
  std::string device;  // the loop device the workload ran on
  std::vector<Slowdown> slowdowns;
  std::vector<StoredPassiveWindow> windows;
};

using bench::TemporaryDatabase;

std::optional<Recording> Load(const fs::path& dir) {
  Recording rec;
  std::ifstream events(dir / "events.json");
  std::stringstream text;
  text << events.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    std::fprintf(stderr, "%s: not a JSON object\n", (dir / "events.json").c_str());
    return std::nullopt;
  }
  rec.scenario = doc.value("scenario", "");
  rec.device = doc.value("device", "");
  for (const nlohmann::json& w : doc.value("throttle", nlohmann::json::array())) {
    // A step record.py refused (weaker than it asks over its first 30 s) and stopped at: not
    // a slowdown to raise, and a raise in it counts as a false alarm.
    if (w.value("refused", false)) continue;
    rec.slowdowns.push_back(
        Slowdown{w.value("on_unix_ms", int64_t{0}), w.value("off_unix_ms", kOpenEnd)});
  }
  // A copy, so that opening (which migrates) never alters the recording;
  // the copy goes after the store closed it (declared first).
  const fs::path copy = fs::temp_directory_path() / fmt::format("replay-passive-{}.db", ::getpid());
  const TemporaryDatabase removed_at_exit{copy};
  removed_at_exit.Remove();
  const fs::path db =
      fs::exists(dir / "iowatch.db") ? dir / "iowatch.db" : dir / "state" / "iowatch.db";
  std::error_code error;
  fs::copy_file(db, copy, fs::copy_options::overwrite_existing, error);
  if (error) {
    std::fprintf(stderr, "%s: %s\n", db.c_str(), error.message().c_str());
    return std::nullopt;
  }
  Result<Store> store = Store::Open(copy);
  if (!store) {
    std::fprintf(stderr, "%s: %s\n", db.c_str(), store.error().message.c_str());
    return std::nullopt;
  }
  Result<std::vector<StoredPassiveWindow>> windows = store->PassiveWindows(0, kOpenEnd);
  if (!windows) {
    std::fprintf(stderr, "%s: %s\n", db.c_str(), windows.error().message.c_str());
    return std::nullopt;
  }
  rec.windows = std::move(*windows);
  return rec;
}

// What one disk's source came to.
struct Tally {
  size_t minutes = 0;
  size_t eligible = 0;
  size_t judged = 0;
  size_t differs = 0;                 // windows whose reason or badness is not the daemon's
  size_t outside = 0;                 // eligible but outside the model
  std::vector<int64_t> false_raises;  // window ends
  // Per slowdown: the first raise and the clear after it, from its start
  // and end; none when not seen.
  std::vector<std::optional<int64_t>> raise_ms, clear_ms;
  std::vector<std::string> raised_by;  // the series that raised first
};

bool Inside(const Slowdown& s, int64_t at_ms, int64_t margin_ms) {
  const int64_t off = s.off_ms == kOpenEnd ? kOpenEnd : s.off_ms + margin_ms;
  return at_ms >= s.on_ms && at_ms < off;
}

void PrintWindow(const Recording& rec, const PassiveVerdict& v) {
  const PassiveWindow& w = v.window;
  const int64_t from = rec.slowdowns.empty() ? 0 : rec.slowdowns.front().on_ms;
  std::printf("%7.1f\t%s/%s\t%6.0f/s\t%7.0f us\t%7.0f us\t%5.2f\t%5.2f\t%s\n",
              static_cast<double>(w.start_ms - from) / kMinuteMs, w.op.c_str(), w.size.c_str(),
              w.rate, w.mean_seconds * 1e6, v.predicted_seconds * 1e6, v.ratio, v.bound_ratio,
              v.bad ? "bad" : "");
}

// Judges one disk's windows of one source, oldest first; each judged one
// printed where `print`.
Tally Replay(const Recording& rec, std::vector<StoredPassiveWindow> windows, bool print) {
  std::ranges::sort(windows, [](const StoredPassiveWindow& a, const StoredPassiveWindow& b) {
    return std::tie(a.window.end_ms, a.window.op, a.window.size) <
           std::tie(b.window.end_ms, b.window.op, b.window.size);
  });
  const PassiveJudgePolicy policy;
  const int64_t margin_ms = int64_t{policy.hysteresis} * kMinuteMs;
  PassiveJudge judge(policy);
  Tally t;
  t.raise_ms.resize(rec.slowdowns.size());
  t.clear_ms.resize(rec.slowdowns.size());
  t.raised_by.resize(rec.slowdowns.size());
  bool regressed = false;
  int64_t last_end = -1;
  for (const StoredPassiveWindow& stored : windows) {
    const PassiveWindow& w = stored.window;
    if (w.end_ms != last_end) ++t.minutes;
    last_end = w.end_ms;
    const PassiveVerdict v = judge.Judge(w);
    if (print && v.reason == PassiveReason::kJudged) PrintWindow(rec, v);
    if (ToString(v.reason) != stored.reason || v.bad != stored.bad) ++t.differs;
    if (w.requests >= policy.model.min_requests && !w.probe &&
        v.reason != PassiveReason::kLearning) {
      ++t.eligible;
      if (v.reason == PassiveReason::kJudged) ++t.judged;
      if (v.reason == PassiveReason::kOutsideModel) ++t.outside;
    }
    const bool now = judge.AnyRegressed();
    if (now && !regressed) {
      bool detected = false;
      for (size_t i = 0; i < rec.slowdowns.size(); ++i) {
        if (!Inside(rec.slowdowns[i], w.end_ms, margin_ms)) continue;
        detected = true;
        if (!t.raise_ms[i]) {
          t.raise_ms[i] = w.end_ms - rec.slowdowns[i].on_ms;
          t.raised_by[i] = w.op + "/" + w.size;
        }
      }
      if (!detected) t.false_raises.push_back(w.end_ms);
    }
    if (!now && regressed) {
      for (size_t i = 0; i < rec.slowdowns.size(); ++i) {
        const Slowdown& s = rec.slowdowns[i];
        if (t.raise_ms[i] && !t.clear_ms[i] && s.off_ms != kOpenEnd && w.end_ms >= s.off_ms) {
          t.clear_ms[i] = w.end_ms - s.off_ms;
        }
      }
    }
    regressed = now;
  }
  return t;
}

// The judged share of eligible windows, in percent (0 without any).
double JudgedPercent(const Tally& t) {
  return t.eligible ? 100.0 * static_cast<double>(t.judged) / static_cast<double>(t.eligible) : 0.0;
}

std::string Seconds(const std::optional<int64_t>& ms) {
  return ms ? fmt::format("{}", *ms / 1000) : "-";
}

std::string List(const std::vector<std::optional<int64_t>>& values) {
  std::string out;
  for (const std::optional<int64_t>& v : values) out += (out.empty() ? "" : ",") + Seconds(v);
  return out.empty() ? "-" : out;
}

// The goals missed by the device stage of the recording's device.
std::vector<std::string> Check(const Recording& rec, const Tally& t) {
  std::vector<std::string> missed;
  const int64_t goal_ms =
      (rec.scenario == "passive-bursty" || rec.scenario == "passive-diurnal" ? 15 : 5) * kMinuteMs;
  if (!t.false_raises.empty()) {
    missed.push_back(fmt::format("{} false alarm(s), first at unix ms {}", t.false_raises.size(),
                                 t.false_raises.front()));
  }
  if (t.eligible == 0) {
    missed.push_back("no window with enough requests after learning (a recording under an hour?)");
  } else if (10 * t.judged < 8 * t.eligible) {
    missed.push_back(fmt::format("{} of {} eligible windows judged ({:.0f} %), goal 80 %", t.judged,
                                 t.eligible, JudgedPercent(t)));
  }
  if (rec.slowdowns.empty()) missed.push_back("no slowdown in events.json");
  for (size_t i = 0; i < rec.slowdowns.size(); ++i) {
    if (!t.raise_ms[i] || *t.raise_ms[i] > goal_ms) {
      missed.push_back(fmt::format("slowdown {} raised after {} s, goal {} s", i + 1,
                                   Seconds(t.raise_ms[i]), goal_ms / 1000));
    }
  }
  return missed;
}

}  // namespace

int main(int argc, char** argv) {
  bool check = false, tsv = false, show_windows = false;
  std::optional<fs::path> dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check") {
      check = true;
    } else if (arg == "--tsv") {
      tsv = true;
    } else if (arg == "--windows") {
      show_windows = true;
    } else if (arg.starts_with("--") || dir) {
      std::fprintf(stderr, "usage: replay_passive [--check] [--tsv] [--windows] DIR (got %s)\n",
                   arg.c_str());
      return 2;
    } else {
      dir = arg;
    }
  }
  if (!dir) {
    std::fprintf(stderr, "usage: replay_passive [--check] [--tsv] [--windows] DIR\n");
    return 2;
  }
  const std::optional<Recording> rec = Load(*dir);
  if (!rec) return 2;
  std::map<std::pair<std::string, PassiveSource>, std::vector<StoredPassiveWindow>> series;
  for (const StoredPassiveWindow& s : rec->windows) {
    series[{s.window.device, s.window.source}].push_back(s);
  }
  if (!tsv) {
    std::printf("%s (%s, slowdowns on %s: %zu)\n\n", dir->c_str(), rec->scenario.c_str(),
                rec->device.c_str(), rec->slowdowns.size());
    std::printf(
        "| disk | source | minutes | eligible | judged | outside model | false alarms "
        "| raise s | by | clear s | not as stored "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  }
  std::vector<std::string> missed = {"no device-stage window of " + rec->device};
  for (const auto& [key, windows] : series) {
    const auto& [device, source] = key;
    const Tally t = Replay(
        *rec, windows, show_windows && device == rec->device && source == PassiveSource::kDevice);
    const double share = JudgedPercent(t);
    std::string by;
    for (const std::string& b : t.raised_by) by += (by.empty() ? "" : ",") + b;
    if (tsv) {
      std::printf("%s\t%s\t%zu\t%zu\t%zu\t%zu\t%zu\t%s\t%s\t%zu\n", device.c_str(),
                  std::string(ToString(source)).c_str(), t.minutes, t.eligible, t.judged, t.outside,
                  t.false_raises.size(), List(t.raise_ms).c_str(), List(t.clear_ms).c_str(),
                  t.differs);
    } else {
      std::printf("| %s | %s | %zu | %zu | %zu (%.0f %%) | %zu | %zu | %s | %s | %s | %zu |\n",
                  device.c_str(), std::string(ToString(source)).c_str(), t.minutes, t.eligible,
                  t.judged, share, t.outside, t.false_raises.size(), List(t.raise_ms).c_str(),
                  by.empty() ? "-" : by.c_str(), List(t.clear_ms).c_str(), t.differs);
    }
    if (device == rec->device && source == PassiveSource::kDevice) missed = Check(*rec, t);
  }
  if (!check) return 0;
  for (const std::string& m : missed) {
    std::fprintf(stderr, "%s: %s device stage: %s\n", dir->c_str(), rec->device.c_str(), m.c_str());
  }
  return missed.empty() ? 0 : 1;
}
