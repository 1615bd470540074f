// Job sets run: numjobs clones as threads and as processes, stonewall
// phases one after the other, the clones' files and seeds, cancellation,
// RunProbe's summed clones; and the parts they are made of: SumResults
// (fio's sum_thread_stats arithmetic), the result sent up a clone's pipe,
// the shared progress board. The null engine (no I/O) keeps them fast; the
// targets are real files, prepared as for any probe.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "probes/pipeline/run_job_set.h"
#include "probes/pipeline/run_probe.h"
#include "probes/run/progress_board.h"
#include "probes/run/result_wire.h"
#include "tests/unit/test_files.h"

namespace iowatch::probes {
namespace {

using iowatch::testing::TempDir;
using std::chrono::milliseconds;
using std::chrono::seconds;

// ---------------------------------------------------------------------------
// SumResults

ProbeResult ReadsOf(uint64_t ios, uint64_t clat_ns, milliseconds runtime) {
  ProbeResult r;
  r.read.ios = ios;
  r.read.bytes = ios * 4096;
  r.read.runtime = runtime;
  for (uint64_t i = 0; i < ios; ++i) {
    r.read.clat.Add(clat_ns);
    r.read.clat_histogram.Record(clat_ns);
  }
  r.elapsed = runtime;
  r.cpu.user_seconds = 0.1;
  return r;
}

TEST(SumResultsTest, AddsCountsAndKeepsTheLongestRuntimeAsFio) {
  ProbeResult a = ReadsOf(100, 1000, milliseconds(200));
  ProbeResult b = ReadsOf(300, 3000, milliseconds(204));
  b.end = RunEnd::kInterrupted;
  a.fallbacks.push_back({"fixedbufs", "memlock"});
  b.fallbacks.push_back({"fixedbufs", "memlock"});
  const ProbeResult results[] = {a, b};
  const ProbeResult sum = SumResults(results);
  EXPECT_EQ(sum.read.ios, 400u);
  EXPECT_EQ(sum.read.bytes, 400u * 4096);
  EXPECT_EQ(sum.read.RuntimeMs(), 204u);
  EXPECT_DOUBLE_EQ(sum.read.Iops(), 400.0 * 1000 / 204);  // fio: total ios / longest runtime
  EXPECT_EQ(sum.read.clat.Count(), 400u);
  EXPECT_DOUBLE_EQ(sum.read.clat.Mean(), 2500.0);
  EXPECT_EQ(sum.read.clat_histogram.Count(), 400u);
  EXPECT_EQ(sum.elapsed, milliseconds(204));
  EXPECT_EQ(sum.JobRuntime(), milliseconds(404));  // fio's job_runtime: the sum
  EXPECT_EQ(sum.jobs, 2u);
  EXPECT_DOUBLE_EQ(sum.cpu.user_seconds, 0.2);
  EXPECT_EQ(sum.end, RunEnd::kInterrupted);
  EXPECT_EQ(sum.fallbacks.size(), 1u);
  // Sums of sums count every job once.
  const ProbeResult nested[] = {sum, ReadsOf(1, 1, milliseconds(1))};
  EXPECT_EQ(SumResults(nested).jobs, 3u);
  EXPECT_EQ(SumResults(nested).JobRuntime(), milliseconds(405));
}

// ---------------------------------------------------------------------------
// The result wire

ProbeResult SyntheticResult() {
  ProbeResult r = ReadsOf(1000, 25'000, milliseconds(1500));
  for (uint64_t v : {10'000u, 20'000u, 90'000u}) {
    r.write.ios++;
    r.write.clat.Add(v);
    r.write.lat.Add(v + 500);
    r.write.slat.Add(500);
    r.write.clat_histogram.Record(v);
    r.write.lat_histogram.Record(v + 500);
  }
  r.write.bytes = 3 * 4096;
  r.write.short_ios = 1;
  r.fsyncs = 7;
  r.cpu = {0.25, 0.5, 11, 3};
  r.end = RunEnd::kFailed;
  r.error = Error::Io("Input/output error", "/dev/x", 5);
  r.fallbacks.push_back({"fixedbufs", "RLIMIT_MEMLOCK"});
  r.abandoned_ios = 2;
  return r;
}

TEST(ResultWireTest, ARoundTripKeepsEveryFigure) {
  const ProbeResult sent = SyntheticResult();
  JobSpec spec;
  spec.name = "receiver's";
  const auto got = DecodeResult(EncodeResult(sent), spec);
  ASSERT_TRUE(got) << got.error().ToString();
  ASSERT_TRUE(*got);
  const ProbeResult& r = **got;
  EXPECT_EQ(r.spec.name, "receiver's");
  EXPECT_EQ(r.read.ios, sent.read.ios);
  EXPECT_EQ(r.read.runtime, sent.read.runtime);
  EXPECT_EQ(r.read.clat.Count(), sent.read.clat.Count());
  EXPECT_EQ(r.read.clat.Mean(), sent.read.clat.Mean());
  EXPECT_EQ(r.write.clat.Min(), 10'000u);
  EXPECT_EQ(r.write.clat.Max(), 90'000u);
  EXPECT_NEAR(r.write.clat.StdDev(), sent.write.clat.StdDev(), 1e-9 * sent.write.clat.StdDev());
  EXPECT_EQ(r.write.slat.Count(), 3u);
  for (double p : {1.0, 50.0, 99.0}) {
    EXPECT_EQ(r.write.clat_histogram.Percentile(p), sent.write.clat_histogram.Percentile(p));
    EXPECT_EQ(r.read.clat_histogram.Percentile(p), sent.read.clat_histogram.Percentile(p));
  }
  EXPECT_EQ(r.write.short_ios, 1u);
  EXPECT_EQ(r.fsyncs, 7u);
  EXPECT_EQ(r.cpu.user_seconds, 0.25);
  EXPECT_EQ(r.cpu.involuntary_switches, 3u);
  EXPECT_EQ(r.end, RunEnd::kFailed);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->os_errno, 5);
  EXPECT_EQ(r.error->path, "/dev/x");
  EXPECT_EQ(r.fallbacks, sent.fallbacks);
  EXPECT_EQ(r.abandoned_ios, 2u);
}

TEST(ResultWireTest, ACloneErrorComesBackAsAnError) {
  const Result<ProbeResult> sent = MakeError(ErrorCode::kUnsupported, "io_uring refused");
  const auto got = DecodeResult(EncodeResult(sent), JobSpec{});
  ASSERT_TRUE(got);
  ASSERT_FALSE(*got);
  EXPECT_EQ(got->error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(got->error().message, "io_uring refused");
}

TEST(ResultWireTest, EveryTruncationAndTrailingBytesAreErrors) {
  const std::vector<uint8_t> bytes = EncodeResult(SyntheticResult());
  for (size_t size = 0; size < bytes.size(); ++size) {
    const auto got = DecodeResult(std::span(bytes).first(size), JobSpec{});
    EXPECT_FALSE(got) << "truncated to " << size << " of " << bytes.size();
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  const auto got = DecodeResult(longer, JobSpec{});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("past the end"), std::string::npos);
}

// ---------------------------------------------------------------------------
// The progress board

TEST(ProgressBoardTest, TotalsTheRunningClonesAcrossAFork) {
  auto board = ProgressBoard::Create(3);
  ASSERT_TRUE(board) << board.error().ToString();
  board->Post(0, {0.5, 100, 10, 4096e2, 0, seconds(3), false});
  board->MarkDone(2);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a clone process writes into the same memory
    board->Post(1, {0.25, 50, 0, 0, 0, seconds(9), true});
    board->MarkMeasuring(1);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const RunProgress total = board->Total();
  EXPECT_DOUBLE_EQ(total.read_iops, 150);
  EXPECT_DOUBLE_EQ(total.write_iops, 10);
  EXPECT_DOUBLE_EQ(total.fraction_done, 0.375);  // the mean of the two running
  EXPECT_EQ(total.eta, seconds(9));
  EXPECT_TRUE(total.ramping);
  EXPECT_TRUE(board->AnyMeasuring());
  EXPECT_TRUE(board->Done(2));
  EXPECT_FALSE(board->Done(0));
}

// ---------------------------------------------------------------------------
// RunJobSet

JobSpec NullJob(const std::string& directory, const std::string& name, uint64_t ios) {
  JobSpec spec;
  spec.name = name;
  spec.directory = directory;
  spec.size = 1 << 20;
  spec.engine = EngineKind::kNull;
  spec.rw = RwMode::kRandRead;
  spec.number_ios = ios;
  return spec;
}

JobSet SetOf(std::vector<JobSpec> specs) {
  JobSet set;
  uint32_t group = 0;
  uint32_t phase = 0;
  for (JobSpec& spec : specs) {
    if (!set.jobs.empty()) {
      group += spec.stonewall || spec.new_group ? 1 : 0;
      phase += spec.stonewall ? 1 : 0;
    }
    set.jobs.push_back({{}, {}, std::move(spec), group, phase});
  }
  return set;
}

class RunJobSetTest : public ::testing::TestWithParam<bool> {};  // thread=1, thread=0

TEST_P(RunJobSetTest, EachCloneRunsItsOwnFileAndSeed) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  JobSpec spec = NullJob(dir.path().string(), "clone", 200);
  spec.numjobs = 3;
  spec.thread = GetParam();
  int prepared = 0;
  JobSetRunOptions options;
  options.on_prepared = [&](dev_t) { ++prepared; };
  const auto clones = RunJobSet(SetOf({spec}), options);
  ASSERT_TRUE(clones) << clones.error().ToString();
  ASSERT_EQ(clones->size(), 3u);
  EXPECT_EQ(prepared, 3);
  for (uint32_t n = 0; n < 3; ++n) {
    const CloneOutcome& clone = (*clones)[n];
    EXPECT_EQ(clone.jobnum, n);
    EXPECT_EQ(clone.outcome.target_path, dir.File("clone." + std::to_string(n) + ".0"));
    EXPECT_TRUE(std::filesystem::exists(clone.outcome.target_path));
    EXPECT_EQ(clone.outcome.result.end, RunEnd::kCompleted) << n;
    EXPECT_EQ(clone.outcome.result.read.ios, 200u) << n;
    EXPECT_EQ(clone.outcome.result.spec.jobnum, n);
    EXPECT_EQ(clone.outcome.result.spec.thread_number, n);
  }
}

TEST_P(RunJobSetTest, AStonewallPhaseStartsWhenTheOneBeforeItHasEnded) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  JobSpec first = NullJob(dir.path().string(), "first", 0);
  first.number_ios = 0;
  first.time_based = true;
  first.runtime = milliseconds(300);
  first.numjobs = 2;
  first.thread = GetParam();
  JobSpec second = NullJob(dir.path().string(), "second", 100);
  second.stonewall = true;
  second.thread = GetParam();
  const auto clones = RunJobSet(SetOf({first, second}), {});
  ASSERT_TRUE(clones) << clones.error().ToString();
  ASSERT_EQ(clones->size(), 3u);
  EXPECT_EQ((*clones)[2].job, 1u);
  const int64_t first_ended = (*clones)[0].outcome.start_unix_ms + 300;
  EXPECT_GE((*clones)[2].outcome.start_unix_ms, first_ended);
  EXPECT_EQ((*clones)[2].outcome.result.read.ios, 100u);
}

TEST_P(RunJobSetTest, ACancelledRunStopsTheClonesWithTheirPartialResults) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  JobSpec spec = NullJob(dir.path().string(), "long", 0);
  spec.number_ios = 0;
  spec.time_based = true;
  spec.runtime = seconds(60);
  spec.numjobs = 2;
  spec.thread = GetParam();
  JobSpec after = NullJob(dir.path().string(), "never", 10);
  after.stonewall = true;
  std::atomic<bool> cancel{false};
  JobSetRunOptions options;
  options.cancel = &cancel;
  options.on_measuring = [&] { cancel.store(true); };  // as soon as the clones measure
  const auto start = std::chrono::steady_clock::now();
  const auto clones = RunJobSet(SetOf({spec, after}), options);
  ASSERT_TRUE(clones) << clones.error().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(20));
  ASSERT_EQ(clones->size(), 2u);  // the stonewalled job never started
  for (const CloneOutcome& clone : *clones) {
    EXPECT_EQ(clone.outcome.result.end, RunEnd::kInterrupted)
        << (clone.outcome.result.error ? clone.outcome.result.error->ToString() : "");
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndProcesses, RunJobSetTest, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? "Threads" : "Processes";
                         });

TEST(RunProbeTest, NumjobsClonesAreSummedIntoOneResult) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  JobSpec spec = NullJob(dir.path().string(), "summed", 200);
  spec.numjobs = 4;
  int prepared = 0;
  ProbeRunOptions options;
  options.create_directory = true;
  options.on_prepared = [&](dev_t) { ++prepared; };
  const auto outcome = RunProbe(spec, options);
  ASSERT_TRUE(outcome) << outcome.error().ToString();
  EXPECT_EQ(prepared, 1);  // the daemon times one preparation
  EXPECT_EQ(outcome->result.jobs, 4u);
  EXPECT_EQ(outcome->result.read.ios, 800u);
  EXPECT_EQ(outcome->result.read.clat.Count(), 800u);
  EXPECT_EQ(outcome->result.spec, spec);
}

}  // namespace
}  // namespace iowatch::probes
