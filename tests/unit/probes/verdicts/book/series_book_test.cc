// SeriesBook: a kill at any moment of a series' run leaves a state to catch
// that run up from, a new series' first run included.
#include "probes/verdicts/book/series_book.h"

#include <gtest/gtest.h>

#include "probes/spec/job_spec.h"
#include "probes/store/store.h"
#include "probes/store/store_baseline_source.h"
#include "tests/unit/probes/store/store_test_util.h"
#include "tests/unit/test_files.h"

namespace iowatch::probes {
namespace {

using iowatch::testing::TempDir;

BaselinePolicy Policy() {
  BaselinePolicy policy;
  policy.runs = 3;
  policy.min_age_ms = 0;
  return policy;
}

RunRecord Stored(Store& store, int64_t start_ms) {
  RunRecord run = test_store::SeriesRun("j", "8:0", start_ms);
  run.fingerprint = JobFingerprint(run.result.spec);  // as the store keeps it
  const Result<int64_t> id = store.AddRun(run);
  EXPECT_TRUE(id) << id.error().ToString();
  run.id = id.value_or(0);
  return run;
}

// What the recorder does before judging a run: the book as the store has
// it, the run's series opened, the runs a kill left unjudged judged again.
Result<std::vector<JudgedRun>> OpenAndCatchUp(Store& store, const RunRecord& run) {
  SeriesBook book(RegressionTracker::For(Policy()), {"j"});
  book.Load(store, 0);
  Result<SeriesState*> opened = book.Open(store, run);
  if (!opened) return ErrorOf(opened);
  StoreBaselineSource source(store, run.job, run.fingerprint, run.device);
  return book.CatchUp(run, source, Policy(), 0);
}

TEST(SeriesBook, ANewSeriesFirstRunKilledBeforeItsStateIsJudgedAtTheNext) {
  TempDir tmp;
  Result<Store> store = Store::OpenInStateDir(tmp.path());
  ASSERT_TRUE(store) << store.error().ToString();
  const RunRecord first = Stored(*store, 1000);
  // Opened and judged, then killed before its state was stored.
  const auto nothing_before = OpenAndCatchUp(*store, first);
  ASSERT_TRUE(nothing_before) << nothing_before.error().ToString();
  EXPECT_TRUE(nothing_before->empty());
  const RunRecord second = Stored(*store, 2000);
  const auto caught_up = OpenAndCatchUp(*store, second);
  ASSERT_TRUE(caught_up) << caught_up.error().ToString();
  ASSERT_EQ(caught_up->size(), 1u) << "the first run was not judged again";
  EXPECT_EQ((*caught_up)[0].run.id, first.id);
}

// A series opened again (its job edited back) starts afresh: the runs of
// its earlier life were judged then, and are not judged again.
TEST(SeriesBook, ASeriesOpenedAgainDoesNotJudgeItsEarlierLifeAgain) {
  TempDir tmp;
  Result<Store> store = Store::OpenInStateDir(tmp.path());
  ASSERT_TRUE(store) << store.error().ToString();
  for (int64_t t = 1000; t <= 3000; t += 1000) Stored(*store, t);
  const auto judged = OpenAndCatchUp(*store, Stored(*store, 4000));
  ASSERT_TRUE(judged) << judged.error().ToString();
  EXPECT_TRUE(judged->empty());
}

}  // namespace
}  // namespace iowatch::probes
