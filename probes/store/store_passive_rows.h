// What the store keeps of the passive judge (store_passive.cc): each
// series' verdict state, and its windows (every window judged or not, and
// whether the series learned from it), so that a restart neither forgets a
// regression nor learns a disk's model again, and a recording can be judged
// again (tests/bench/verdicts).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "probes/verdicts/passive/passive_judge.h"
#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::probes {

// The last judged window's figures, kept so that a restart exports the
// series' ratio before its next judged window.
struct PassiveJudgedFigures {
  int64_t end_ms = 0;
  double mean_seconds = 0;
  double predicted_seconds = 0;
  double ratio = 0;
  double bound_ratio = 0;
  bool operator==(const PassiveJudgedFigures&) const = default;
};

struct StoredPassiveState {
  std::string device;
  std::string op;
  std::string size;
  PassiveSource source = PassiveSource::kDiskstats;
  std::string identity;         // which physical disk the name was (diskseq, serial/wwid)
  int64_t through_unix_ms = 0;  // the end of the last window the state has seen
  PassiveSeriesState state;
  std::optional<PassiveJudgedFigures> last_judged;
  bool operator==(const StoredPassiveState&) const = default;
};

// A passive_states row whose state could not be read: its key and why.
struct UnreadablePassiveState {
  std::string device;
  std::string op;
  std::string size;
  std::string source;
  std::string why;
  // `passive_states row (device "…", op "…", size "…", source "…"):
  // expected …, found …` (raw bytes of the file: escape before printing).
  std::string Describe() const;
};

// One window as judged: the window, what became of it, and whether the
// series learned from it (then or, for a bad window of a streak that broke,
// later: MarkPassiveLearned).
struct StoredPassiveWindow {
  PassiveWindow window;
  std::string reason;  // PassiveReason's word
  double predicted_seconds = 0;
  double bound_ratio = 0;
  bool bad = false;
  bool learned = false;
  bool operator==(const StoredPassiveWindow&) const = default;
};

// A window learned after it was stored (it waited in a streak that broke),
// or chosen for its series' drift reference (`reference`: kept whatever its
// age).
struct PassiveLearnedMark {
  std::string device;
  std::string op;
  std::string size;
  PassiveSource source = PassiveSource::kDiskstats;
  int64_t end_ms = 0;
  bool reference = false;
};

}  // namespace iowatch::probes
