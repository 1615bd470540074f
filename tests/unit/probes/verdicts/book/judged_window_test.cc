// JudgedWindow: the share of a job's runs of the last 24 h that were judged,
// why the others were not, and the last judged run, which outlives the window.
#include "probes/verdicts/book/judged_window.h"

#include <gtest/gtest.h>

namespace iowatch::probes {
namespace {

constexpr int64_t kHour = 3600 * 1000;

uint64_t NotJudged(const JudgedSummary& s, std::string_view reason) {
  for (const auto& [word, count] : s.not_judged) {
    if (word == reason) return count;
  }
  ADD_FAILURE() << "no reason " << reason;
  return 0;
}

TEST(JudgedWindow, CountsTheLastDayByReasonAndKeepsTheLastJudgedRun) {
  JudgedWindow w;
  const int64_t t0 = 1'700'000'000'000;
  w.Add(t0, true, "judged");
  w.Add(t0 + 1 * kHour, false, "learning");
  w.Add(t0 + 2 * kHour, false, "cpu_contended");
  w.Add(t0 + 3 * kHour, false, "cpu_contended");
  w.Add(t0 + 3 * kHour, false, "outside_model");  // the load model does not extrapolate
  JudgedSummary now = w.Summarize(t0 + 4 * kHour);
  EXPECT_EQ(now.runs, 5u);
  EXPECT_EQ(now.judged, 1u);
  EXPECT_EQ(NotJudged(now, "cpu_contended"), 2u);
  EXPECT_EQ(NotJudged(now, "learning"), 1u);
  EXPECT_EQ(NotJudged(now, "outside_model"), 1u);
  EXPECT_EQ(NotJudged(now, "no_metric"), 0u);
  EXPECT_EQ(now.not_judged.size(), 7u);  // every reason, 0 when none
  EXPECT_EQ(now.last_judged_unix_ms, t0);
  // A day after the judged run it has left the window, not the timestamp.
  const JudgedSummary later = w.Summarize(t0 + 24 * kHour + 1);
  EXPECT_EQ(later.runs, 4u);
  EXPECT_EQ(later.judged, 0u);
  EXPECT_EQ(later.last_judged_unix_ms, t0);
  EXPECT_EQ(w.Summarize(t0 + 40 * kHour).runs, 0u);
}

TEST(JudgedWindow, TheStoresLastJudgedRunMayBeOlderThanTheWindow) {
  JudgedWindow w;
  w.SetLastJudged(5'000);
  w.Add(100 * kHour, false, "bands_off");
  w.Add(101 * kHour, false, "a word of a newer iowatch");
  const JudgedSummary s = w.Summarize(102 * kHour);
  EXPECT_EQ(s.last_judged_unix_ms, 5'000);
  EXPECT_EQ(s.runs, 2u);
  EXPECT_EQ(NotJudged(s, "bands_off"), 1u);
}

}  // namespace
}  // namespace iowatch::probes
