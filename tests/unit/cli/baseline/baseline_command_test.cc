// `iowatch baseline`: its command line, and each action against a real store
// in a scratch directory under /var/tmp, filled with synthetic runs whose
// metrics are set by hand so the tables' numbers can be checked.
#include "cli/baseline/baseline_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/baseline/baseline_table.h"
#include "cli/baseline/baseline_text.h"
#include "common/terminal_text.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::daemon {
namespace {

using probes::Baseline;
using probes::MetricBaseline;
using probes::RunRecord;
using probes::Store;
using probes::StoredBaseline;
using probes::test_store::ScratchDir;
using probes::test_store::SeriesRun;

constexpr int64_t kT0 = 1717243200000;  // 2024-06-01T12:00:00Z
constexpr int64_t kMinute = 60'000;

// Local time is UTC here, so times print the same on every machine.
class BaselineCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* tz = ::getenv("TZ")) saved_tz_ = tz;
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    auto opened = Store::OpenInStateDir(dir_.Path());
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_.emplace(std::move(*opened));
  }
  void TearDown() override {
    if (saved_tz_) {
      ::setenv("TZ", saved_tz_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }

  // An ok run of `job` on `device` whose read metrics are exactly these.
  int64_t AddRun(const std::string& job, const std::string& device, int64_t start_ms, double iops,
                 double p99_seconds, bool ok = true) {
    RunRecord run = SeriesRun(job, device, start_ms, ok);
    run.metrics = {{"read", "iops", iops},
                   {"read", "bandwidth_bytes", iops * 4096},
                   {"read", "clat_p99_seconds", p99_seconds}};
    auto id = store_->AddRun(run);
    EXPECT_TRUE(id) << id.error().ToString();
    return id.value_or(0);
  }

  // This host as `baseline import` and `export` see it: these jobs and disks,
  // and `firmware` for every device.
  static BaselineContext Host(std::vector<LocalProbe> probes, std::string firmware = "") {
    BaselineContext context;
    context.local_probes = [probes] { return probes; };
    context.firmware_of = [firmware](std::string_view) { return firmware; };
    return context;
  }
  // A job here of `job`'s workload on `device`, a disk of `model`.
  LocalProbe Probe(const std::string& job, const std::string& fingerprint,
                   const std::string& device, std::string model, std::string firmware = "") {
    return {job,
            fingerprint,
            probes::WorkloadFingerprintOf(fingerprint),
            device,
            {std::move(model), std::move(firmware)}};
  }

  std::string Fingerprint(const std::string& job) {
    auto runs = store_->RecentRuns(job, "", "", 1);
    EXPECT_TRUE(runs && !runs->empty());
    return runs && !runs->empty() ? runs->front().fingerprint : "";
  }

  // A learned (unpinned) baseline of `job` on `device` from the given runs.
  void PutLearned(const std::string& job, const std::string& device, std::vector<int64_t> runs,
                  double iops, double iops_spread, double p99, double p99_spread) {
    Baseline b{.job = job,
               .fingerprint = Fingerprint(job),
               .device = device,
               .model = "Samsung SSD 980 PRO 1TB",
               .created_unix_ms = kT0,
               .run_ids = std::move(runs),
               .metrics = {MetricBaseline{"read", "iops", iops, iops_spread},
                           MetricBaseline{"read", "bandwidth_bytes", iops * 4096, 0},
                           MetricBaseline{"read", "clat_p99_seconds", p99, p99_spread}}};
    auto id = store_->PutBaseline(b);
    ASSERT_TRUE(id) << id.error().ToString();
  }

  ScratchDir dir_;
  std::optional<Store> store_;
  std::optional<std::string> saved_tz_;
};

// --- Command line ---------------------------------------------------------

TEST(BaselineArgs, ActionsAndOptionsInAnyPosition) {
  auto list = ParseBaselineArgs({"--state.dir=/srv/iw", "list"});
  ASSERT_TRUE(list) << list.error().ToString();
  EXPECT_EQ(list->action, BaselineAction::kList);
  EXPECT_EQ(list->state_dir, "/srv/iw");

  auto show = ParseBaselineArgs({"show", "randread-4k", "--runs", "3", "--state.dir", "/x"});
  ASSERT_TRUE(show) << show.error().ToString();
  EXPECT_EQ(show->action, BaselineAction::kShow);
  EXPECT_EQ(show->job, "randread-4k");
  EXPECT_EQ(show->runs, 3u);
  EXPECT_EQ(show->state_dir, "/x");

  auto capture = ParseBaselineArgs({"capture", "j", "--runs=7", "--device=254:0"});
  ASSERT_TRUE(capture) << capture.error().ToString();
  EXPECT_EQ(capture->action, BaselineAction::kCapture);
  EXPECT_EQ(capture->runs, 7u);
  EXPECT_EQ(capture->device, "254:0");

  auto to_stdout = ParseBaselineArgs({"export"});
  ASSERT_TRUE(to_stdout);
  EXPECT_EQ(to_stdout->file, "");
  auto from_stdin = ParseBaselineArgs({"import", "-"});
  ASSERT_TRUE(from_stdin);
  EXPECT_EQ(from_stdin->file, "-");

  auto help = ParseBaselineArgs({"show", "--help"});
  ASSERT_TRUE(help);
  EXPECT_EQ(help->action, BaselineAction::kHelp);
}

TEST(BaselineArgs, ErrorsNameTheArgument) {
  auto message = [](std::vector<std::string> args) {
    auto parsed = ParseBaselineArgs(args);
    return parsed ? std::string("(parsed)") : parsed.error().message;
  };
  EXPECT_NE(message({}).find("expected an action"), std::string::npos);
  EXPECT_NE(message({"lsit"}).find("unknown action \"lsit\""), std::string::npos);
  EXPECT_NE(message({"show"}).find("usage: iowatch baseline show JOB"), std::string::npos);
  EXPECT_NE(message({"list", "extra"}).find("usage: iowatch baseline list"), std::string::npos);
  EXPECT_NE(message({"import"}).find("import FILE|-"), std::string::npos);
  EXPECT_NE(message({"list", "--verbose"}).find("unknown option \"--verbose\""), std::string::npos);
  EXPECT_NE(message({"capture", "j", "--runs=0"}).find("--runs"), std::string::npos);
  EXPECT_NE(message({"capture", "j", "--runs=x5"}).find("\"x5\""), std::string::npos);
  EXPECT_NE(message({"capture", "j", "--device=sda"}).find("MAJOR:MINOR"), std::string::npos);
  EXPECT_NE(message({"show", "j", "--device=8:0"}).find("capture only"), std::string::npos);
  EXPECT_NE(message({"reset", "j", "--runs=3"}).find("show and capture only"), std::string::npos);
  EXPECT_NE(message({"list", "--state.dir"}).find("--state.dir: 1 required DIR missing"),
            std::string::npos);
  EXPECT_NE(message({"--runs=3", "show", "j"})
                .find("--runs goes after the action: iowatch baseline show JOB [--runs=N]"),
            std::string::npos);
  EXPECT_NE(message({"show", "j", "k"}).find("usage: iowatch baseline show JOB [--runs=N]"),
            std::string::npos);
}

TEST(BaselineArgs, DashIsAnArgumentAndDoubleDashEndsTheOptions) {
  auto to_stdout = ParseBaselineArgs({"export", "-"});
  ASSERT_TRUE(to_stdout) << to_stdout.error().ToString();
  EXPECT_EQ(to_stdout->file, "-");
  auto odd = ParseBaselineArgs({"import", "--state.dir=/x", "--", "--odd.json"});
  ASSERT_TRUE(odd) << odd.error().ToString();
  EXPECT_EQ(odd->file, "--odd.json");
  EXPECT_EQ(odd->state_dir, "/x");
}

// One usage text: the help is made from the CLI11 definitions the parser uses.
TEST(BaselineArgs, TheHelpListsEachActionAsItIsParsed) {
  const std::string usage = BaselineUsage();
  EXPECT_TRUE(usage.starts_with("Usage: iowatch baseline [OPTIONS] ACTION\n")) << usage;
  for (const char* synopsis :
       {"list", "show JOB [--runs=N]", "capture JOB [--runs=N] [--device=MAJ:MIN]", "reset JOB",
        "passive-reset DISK", "export [FILE|-]", "import FILE|-"}) {
    const bool listed = usage.find(fmt::format("\n  {} ", synopsis)) != std::string::npos ||
                        usage.find(fmt::format("\n  {}\n", synopsis)) != std::string::npos;
    EXPECT_TRUE(listed) << synopsis << " in\n" << usage;
  }
  EXPECT_NE(usage.find("--state.dir DIR"), std::string::npos) << usage;
}

// --- Tables -----------------------------------------------------------------

TEST(BaselineText, NumbersAndUnits) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(16), "16.0");
  EXPECT_EQ(FormatNumber(0.181), "0.181");
  EXPECT_EQ(FormatNumber(412.4), "412");
  EXPECT_EQ(FormatNumber(12873.5), "12874");
  EXPECT_EQ(FormatNumber(129000), "129k");
  EXPECT_EQ(FormatNumber(1.29e6), "1.29M");
  EXPECT_EQ(FormatRatio(0.75), "0.75");
  EXPECT_EQ(FormatRatio(12.5), "12.5");
  EXPECT_EQ(FormatRatio(250), "250");
  EXPECT_EQ(DisplayWidth("±µs"), 3u);

  EXPECT_EQ(UnitFor("iops", 0).label, "IOPS");
  EXPECT_EQ(UnitFor("bandwidth_bytes", 0).scale, 1.0 / (1 << 20));
  const RowUnit fast = UnitFor("clat_p99_9_seconds", 4e-4);
  EXPECT_EQ(fast.label, "clat p99.9 µs");
  EXPECT_EQ(fast.scale, 1e6);
  EXPECT_EQ(UnitFor("lat_mean_seconds", 0.02).label, "lat mean ms");
  EXPECT_EQ(UnitFor("lat_mean_seconds", 12).label, "lat mean s");
}

// Adversarial test: names and models with escape sequences or
// newlines were printed raw by `baseline list/show` (TerminalText's own
// cases: tests/unit/common/terminal_text_test.cc).
TEST(BaselineText, StoredTextCannotReachTheTerminalRaw) {
  EXPECT_EQ(RenderTable({{"A", "B"}, {"\x1b]0;t\x07", "b"}}, {{}, {}}),
            "A             B\n\\x1b]0;t\\x07  b\n");
}

TEST(BaselineTable, ShortFingerprintIsFnv1a) {
  EXPECT_EQ(ShortFingerprint(""), "811c9dc5");
  EXPECT_EQ(ShortFingerprint("a"), "e40c292c");
}

TEST_F(BaselineCommandTest, ListShowsEveryBaseline) {
  std::string out;
  ASSERT_TRUE(BaselineList(*store_, out));
  EXPECT_EQ(out, "no baselines in " + store_->Path() + "\n");

  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(AddRun("randread-4k", "259:0", kT0 + i, 4000, 4e-4));
  PutLearned("randread-4k", "259:0", ids, 4000, 100, 4e-4, 2e-5);
  ASSERT_TRUE(store_->ImportBaselines(R"({"iowatch_baselines": 1, "baselines": [
      {"job": "golden", "fingerprint": "rw=read", "device": "8:0", "model": "",
       "created_unix_ms": 1717250400000, "runs": 9, "metrics": []}]})"));

  out.clear();
  ASSERT_TRUE(BaselineList(*store_, out));
  const std::string fingerprint = ShortFingerprint(Fingerprint("randread-4k"));
  EXPECT_EQ(out,
            "JOB          DEVICE  PARAMS    BAND   RUNS  PINNED  CREATED                    MODEL\n"
            "golden       8:0     " +
                ShortFingerprint("rw=read") +
                "  clean     9  yes     2024-06-01T14:00:00+00:00  -\n"
                "randread-4k  259:0   " +
                fingerprint +
                "  clean     5  no      2024-06-01T12:00:00+00:00  Samsung SSD 980 PRO 1TB\n");
}

TEST_F(BaselineCommandTest, ShowPutsRunsBesideTheBaseline) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(AddRun("randread-4k", "259:0", kT0 + i, 4000, 4e-4));
  PutLearned("randread-4k", "259:0", ids, 4000, 100, 4e-4, 2e-5);
  const int64_t slow = AddRun("randread-4k", "259:0", kT0 + 15 * kMinute, 3000, 9e-4);
  const int64_t fine = AddRun("randread-4k", "259:0", kT0 + 30 * kMinute, 4100, 4.1e-4);

  std::string out;
  ASSERT_TRUE(BaselineShow(*store_, "randread-4k", 2, {}, out)) << out;
  const std::string fp = Fingerprint("randread-4k");
  EXPECT_TRUE(out.starts_with(
      "randread-4k on 259:0 (Samsung SSD 980 PRO 1TB)\n"
      "  baseline: learned 2024-06-01T12:00:00+00:00 from 5 runs (#1 #2 #3 #4 #5), not pinned\n"
      "  params " +
      ShortFingerprint(fp) + ": "))
      << out;
  // The fingerprint is wrapped after a ';' to fit 100 columns.
  const size_t params = out.find(ShortFingerprint(fp) + ": ") + 10;
  std::string unwrapped = out.substr(params, out.find("\n\n") - params);
  for (size_t nl; (nl = unwrapped.find("\n")) != std::string::npos;) {
    unwrapped.erase(nl, unwrapped.find_first_not_of(' ', nl + 1) - nl);
  }
  EXPECT_EQ(unwrapped, TerminalText(fp));  // its backslashes doubled, as every name printed
  // Rows are the metrics judged (throughput and total latency); the slow run
  // is marked on IOPS and MiB/s, the baseline's only judged metrics here.
  const std::string table =
      "\n\n"
      "                                            #" +
      std::to_string(fine) + "           #" + std::to_string(slow) +
      "\n"
      "                   median  spread  06-01 12:30  06-01 12:15\n"
      "read  IOPS           4000  ±100      4100 1.02    3000 0.75!\n"
      "      MiB/s          15.6  ±0        16.0 1.02    11.7 0.75!\n"
      "      lat mean µs       -             255          251\n";
  EXPECT_NE(out.find(table), std::string::npos) << out;
  EXPECT_NE(out.find("'!' when it is worse"), std::string::npos);
  EXPECT_NE(out.find("20% for\nIOPS and MiB/s"), std::string::npos) << out;
}

// A standing regression explains itself under `show` as the daemon's journal
// does: the newest run's ratio to its band's baseline, since when (the
// series state the daemon stored), the baseline's runs and their load and
// steal beside that run's.
TEST_F(BaselineCommandTest, ShowExplainsEachStandingRegression) {
  probes::RunConditions quiet;
  quiet.seconds = 1;
  quiet.device_ios = quiet.own_requests = 100;
  quiet.device_bytes = quiet.own_bytes = 100 * 4096;
  quiet.cpu_steal = 0.01;
  const auto add = [&](int64_t start_ms, double iops, double steal) {
    RunRecord run = SeriesRun("j", "259:0", start_ms);
    run.metrics = {{"read", "iops", iops}};
    run.conditions = quiet;
    run.conditions->cpu_steal = steal;
    auto id = store_->AddRun(run);
    EXPECT_TRUE(id) << id.error().ToString();
    return id.value_or(0);
  };
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(add(kT0 + i * kMinute, 4000, 0.01 * (i + 1)));
  PutLearned("j", "259:0", ids, 4000, 100, 4e-4, 2e-5);
  add(kT0 + 15 * kMinute, 2000, 0.04);
  add(kT0 + 30 * kMinute, 1000, 0.04);
  std::string out;
  ASSERT_TRUE(BaselineShow(*store_, "j", 10, {}, out)) << out;
  EXPECT_EQ(out.find("regressions of"), std::string::npos) << "none stands yet:\n" << out;

  // The daemon raised read iops with the runs of 12:15 and 12:30.
  probes::StoredSeriesState state;
  state.job = "j";
  state.fingerprint = Fingerprint("j");
  state.device = "259:0";
  state.state.tracker = probes::RegressionTracker(2);
  probes::MetricVerdict bad{"read", "iops", 2000, 4000, 0.5, 800, true, true, ""};
  const std::vector<probes::MetricVerdict> run = {bad};
  state.state.tracker.Update(run, kT0 + 15 * kMinute, kT0 + 15 * kMinute + 1000);
  state.state.tracker.Update(run, kT0 + 30 * kMinute, kT0 + 30 * kMinute + 1000);
  ASSERT_TRUE(store_->PutSeriesState(state));
  out.clear();
  ASSERT_TRUE(BaselineShow(*store_, "j", 10, {}, out)) << out;
  EXPECT_NE(out.find("regressions of j on 259:0 (params " + ShortFingerprint(state.fingerprint) +
                     "):\n  read iops: 0.25x its baseline; bad since 2024-06-01T12:15:00+00:00; "
                     "judged against 3 runs of 2024-06-01T12:00:00+00:00 to "
                     "2024-06-01T12:02:00+00:00 (load 0/s, steal 2.0 %); the judged run: load "
                     "0/s, steal 4.0 %\n\n"),
            std::string::npos)
      << out;
}

TEST_F(BaselineCommandTest, ShowWrapsManyRunsIntoBlocksWithin100Columns) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 12; ++i) {
    ids.push_back(AddRun("j", "259:0", kT0 + i * kMinute, 12873.5 + i, 1.5e-4 + i * 1e-6));
  }
  PutLearned("j", "259:0", {ids[0], ids[1], ids[2]}, 12873.5, 211.3, 1.5e-4, 3e-6);
  std::string out;
  ASSERT_TRUE(BaselineShow(*store_, "j", 10, {}, out));
  std::istringstream lines(out);
  size_t blocks = 0;
  for (std::string line; std::getline(lines, line);) {
    // Columns, not bytes: µ and ± take two bytes each.
    size_t columns = 0;
    for (char c : line) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(columns, 100u) << line;
    if (line.find("median  spread") != std::string::npos) ++blocks;
  }
  EXPECT_GE(blocks, 2u) << out;
  for (size_t i = 2; i < 12; ++i) {  // the newest 10
    EXPECT_NE(out.find("#" + std::to_string(ids[i])), std::string::npos) << i;
  }
  EXPECT_EQ(out.find("06-01 12:01"), std::string::npos);  // the 11th newest
  EXPECT_NE(out.find("12874  ±211"), std::string::npos) << out;
}

TEST_F(BaselineCommandTest, ShowRunsWithoutABaselineYet) {
  AddRun("learning", "259:0", kT0, 5000, 2e-2);
  std::string out;
  // Rows are the metrics judged: here IOPS and clat p99, as a job's `judge` may say.
  probes::BaselinePolicy policy;
  policy.metrics = {"iops", "clat_p99_seconds"};
  ASSERT_TRUE(BaselineShow(*store_, "learning", 10, policy, out));
  EXPECT_EQ(out.find("lat mean"), std::string::npos) << out;
  EXPECT_NE(out.find("no baseline yet"), std::string::npos) << out;
  EXPECT_NE(out.find("clat p99 ms"), std::string::npos) << out;  // 20 ms reads in ms
  EXPECT_NE(out.find("5000"), std::string::npos) << out;
  EXPECT_EQ(out.find("median"), std::string::npos) << out;
}

// A run whose stored histogram no longer decodes is still shown, with what
// the store could not read under the table.
TEST_F(BaselineCommandTest, ShowNamesARunTheStoreCouldNotReadWhole) {
  const int64_t id = AddRun("learning", "259:0", kT0, 5000, 2e-2);
  ASSERT_GT(probes::test_store::QueryInt(store_->Path(), "SELECT count(*) FROM run_ops"), 0);
  probes::test_store::Exec(store_->Path(), "UPDATE run_ops SET lat_histogram = x'ffffffff0102'");
  std::string out;
  ASSERT_TRUE(BaselineShow(*store_, "learning", 10, probes::BaselinePolicy{}, out));
  EXPECT_NE(out.find("5000"), std::string::npos) << out;
  EXPECT_NE(out.find(fmt::format("  run {}: read lat histogram: ", id)), std::string::npos) << out;
}

TEST_F(BaselineCommandTest, ShowOfAnUnknownJobIsAnError) {
  std::vector<int64_t> ids{AddRun("known", "259:0", kT0, 1, 1e-4)};
  PutLearned("known", "259:0", ids, 1, 0, 1e-4, 0);
  std::string out;
  auto shown = BaselineShow(*store_, "nope", 10, {}, out);
  ASSERT_FALSE(shown);
  EXPECT_EQ(shown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(shown.error().message.find("no baseline and no successful run of job \"nope\""),
            std::string::npos);
  EXPECT_NE(shown.error().message.find("jobs with a baseline: known"), std::string::npos);
}

// --- Capture ------------------------------------------------------------------

TEST_F(BaselineCommandTest, CaptureNeedsNRunsThenPinsTheLatest) {
  for (int i = 0; i < 3; ++i) AddRun("j", "254:0", kT0 + i * kMinute, 1000.0 * (i + 1), 1e-4);
  AddRun("j", "254:0", kT0 + 3 * kMinute, 1, 1, /*ok=*/false);  // failed runs do not count
  std::string out;
  auto refused = BaselineCapture(*store_, "j", 5, "", kT0 + kMinute * 60, {}, out);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "only 3 successful runs of j on 254:0; need 5 (--runs)");
  EXPECT_TRUE(out.empty());

  const int64_t fourth = AddRun("j", "254:0", kT0 + 4 * kMinute, 4000, 3e-4);
  const int64_t fifth = AddRun("j", "254:0", kT0 + 5 * kMinute, 5000, 2e-4);
  ASSERT_TRUE(BaselineCapture(*store_, "j", 3, "", kT0 + kMinute * 60, {}, out)) << out;
  auto stored = store_->GetBaseline("j", Fingerprint("j"), "254:0");
  ASSERT_TRUE(stored && *stored);
  const StoredBaseline& s = **stored;
  EXPECT_TRUE(s.pinned);
  EXPECT_EQ(s.run_count, 3);
  EXPECT_EQ(s.baseline.run_ids, (std::vector<int64_t>{3, fourth, fifth}));
  EXPECT_EQ(s.baseline.created_unix_ms, kT0 + kMinute * 60);
  ASSERT_NE(s.baseline.Find("read", "iops"), nullptr);
  EXPECT_EQ(s.baseline.Find("read", "iops")->median, 4000);
  EXPECT_EQ(s.baseline.Find("read", "clat_p99_seconds")->median, 2e-4);
  EXPECT_NE(out.find("captured 2024-06-01T13:00:00+00:00 from 3 runs"), std::string::npos) << out;
  EXPECT_NE(out.find("IOPS              4000  ±1483"), std::string::npos) << out;

  // A second capture shows what it replaced.
  out.clear();
  AddRun("j", "254:0", kT0 + 6 * kMinute, 6000, 2e-4);
  ASSERT_TRUE(BaselineCapture(*store_, "j", 3, "", kT0 + kMinute * 61, {}, out));
  EXPECT_NE(out.find("previous"), std::string::npos) << out;
  EXPECT_NE(out.find("×1.25"), std::string::npos) << out;  // 5000 / 4000
}

// A capture is the operator's word on the new norm: the series' load-band
// baselines, learned against the old one, are deleted to be relearned.
TEST_F(BaselineCommandTest, CaptureDeletesTheSeriesLoadBands) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(AddRun("j", "254:0", kT0 + i * kMinute, 4000, 3e-4));
  PutLearned("j", "254:0", ids, 4000, 100, 3e-4, 2e-5);
  auto clean = store_->GetBaseline("j", Fingerprint("j"), "254:0");
  ASSERT_TRUE(clean && *clean);
  probes::Baseline band = (*clean)->baseline;
  band.band = 4;
  ASSERT_TRUE(store_->PutBaseline(band));
  std::string out;
  ASSERT_TRUE(BaselineCapture(*store_, "j", 3, "", kT0 + kMinute * 60, {}, out)) << out;
  EXPECT_NE(out.find("deleted 1 load-band baseline: they relearn from the runs after this "
                     "capture"),
            std::string::npos)
      << out;
  auto left = store_->SeriesBaselines("j", Fingerprint("j"), "254:0");
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ(left->front().baseline.band, 0);
  EXPECT_TRUE(left->front().pinned);
}

TEST_F(BaselineCommandTest, CaptureFollowsTheLatestRunOrTheGivenDevice) {
  for (int i = 0; i < 2; ++i) AddRun("j", "8:0", kT0 + i, 100, 1e-2);
  AddRun("j", "259:0", kT0 + 10, 9000, 1e-4);  // the latest run is on 259:0
  std::string out;
  auto refused = BaselineCapture(*store_, "j", 2, "", kT0, {}, out);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("only 1 successful run of j on 259:0"), std::string::npos);
  ASSERT_TRUE(BaselineCapture(*store_, "j", 2, "8:0", kT0, {}, out)) << out;
  auto stored = store_->GetBaseline("j", Fingerprint("j"), "8:0");
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->baseline.Find("read", "iops")->median, 100);

  auto none = BaselineCapture(*store_, "j", 2, "7:7", kT0, {}, out);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no successful run of j on 7:7"), std::string::npos);
}

// --- Reset, export, import ------------------------------------------------------

TEST_F(BaselineCommandTest, ResetDeletesEveryBaselineOfTheJob) {
  PutLearned("j", "259:0", {AddRun("j", "259:0", kT0, 1, 1e-4)}, 1, 0, 1e-4, 0);
  PutLearned("j", "8:0", {AddRun("j", "8:0", kT0, 1, 1e-4)}, 1, 0, 1e-4, 0);
  PutLearned("other", "8:0", {AddRun("other", "8:0", kT0, 1, 1e-4)}, 1, 0, 1e-4, 0);
  std::string out;
  ASSERT_TRUE(BaselineReset(*store_, "j", out));
  EXPECT_EQ(out,
            "deleted 2 baselines of j; the daemon learns anew from its next successful runs\n");
  auto left = store_->ListBaselines();
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ(left->front().baseline.job, "other");
  out.clear();
  ASSERT_TRUE(BaselineReset(*store_, "j", out));
  EXPECT_EQ(out, "no baseline of j to delete\n");
}

// The operator's word that a disk's new latency is its norm: its passive
// series go, and the reset is noted for a running daemon.
TEST_F(BaselineCommandTest, PassiveResetForgetsTheDisksSeriesAndNotesIt) {
  probes::StoredPassiveState state;
  state.device = "sda";
  state.op = "read";
  state.size = "all";
  state.identity = "S3Z/wwn";
  const std::vector<probes::StoredPassiveState> states = {state};
  ASSERT_TRUE(store_->PutPassive({}, {}, states));
  std::string out;
  ASSERT_TRUE(BaselinePassiveReset(*store_, "sda", kT0, out));
  EXPECT_EQ(out,
            "forgot 1 passive series of sda; a running daemon learns it afresh within a minute "
            "(judged again after an hour of busy minutes)\n");
  std::vector<probes::UnreadablePassiveState> unreadable;
  EXPECT_TRUE(store_->PassiveStates(unreadable)->empty());
  EXPECT_EQ(store_->PassiveResetsAfter(0)->size(), 1u);
  const auto args = ParseBaselineArgs({"passive-reset", "sdb"});
  ASSERT_TRUE(args) << args.error().ToString();
  EXPECT_EQ(args->action, BaselineAction::kPassiveReset);
  EXPECT_EQ(args->disk, "sdb");
}

constexpr const char* kSamsung = "Samsung SSD 980 PRO 1TB";

TEST_F(BaselineCommandTest, ExportImportRoundTripThroughAFile) {
  PutLearned("a", "259:0", {AddRun("a", "259:0", kT0, 4000, 4e-4)}, 4000, 10, 4e-4, 1e-5);
  PutLearned("b", "8:0", {AddRun("b", "8:0", kT0, 150, 9e-3)}, 150, 3, 9e-3, 1e-3);
  const std::string file = (dir_.Path() / "golden.json").string();
  std::string out;
  ASSERT_TRUE(BaselineExport(*store_, file, Host({}), out));
  EXPECT_EQ(out, "exported 2 baselines to " + file + "\n");
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));

  std::string to_stdout;
  ASSERT_TRUE(BaselineExport(*store_, "-", Host({}), to_stdout));
  std::ifstream in(file);
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written, to_stdout);
  EXPECT_EQ(written.find("firmware"), std::string::npos);  // none known: none written

  // Another host with the same jobs on the same disks: both come back as they were,
  // each on its own job although both jobs run the same workload.
  const BaselineContext twin = Host({Probe("a", Fingerprint("a"), "259:0", kSamsung),
                                     Probe("b", Fingerprint("b"), "8:0", kSamsung)});
  ScratchDir other_dir;
  auto other = Store::OpenInStateDir(other_dir.Path());
  ASSERT_TRUE(other);
  out.clear();
  ASSERT_TRUE(BaselineImport(*other, file, twin, out)) << out;
  EXPECT_TRUE(out.starts_with("imported 2 baselines from " + file + " (pinned):\n")) << out;
  auto mine = store_->ListBaselines();
  auto theirs = other->ListBaselines();
  ASSERT_TRUE(mine && theirs);
  ASSERT_EQ(theirs->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    Baseline want = (*mine)[i].baseline;
    want.run_ids.clear();  // not exported: they mean nothing elsewhere
    EXPECT_EQ((*theirs)[i].baseline, want);
    EXPECT_TRUE((*theirs)[i].pinned);
    EXPECT_EQ((*theirs)[i].run_count, 1);
  }

  BaselineContext from_stdin = twin;
  from_stdin.read_stdin = [&] { return Result<std::string>(written); };
  out.clear();
  ASSERT_TRUE(BaselineImport(*other, "-", from_stdin, out));
  EXPECT_TRUE(out.starts_with("imported 2 baselines from <stdin> (pinned):\n")) << out;
}

// The golden baseline of a hardware class: exported on one host, pinned on
// another host's job of the same workload, whatever its name, file and device
// number, when its disk is the same model and firmware.
TEST_F(BaselineCommandTest, AGoldenBaselineLandsOnTheJobOfItsWorkloadOnTheSameModel) {
  PutLearned("randread", "259:0", {AddRun("randread", "259:0", kT0, 4000, 4e-4)}, 4000, 10, 4e-4,
             1e-5);
  const std::string file = (dir_.Path() / "golden.json").string();
  std::string out;
  ASSERT_TRUE(BaselineExport(*store_, file, Host({}, "5B2QGXA7"), out));

  // Here the job has another name and probes another file, on disk 8:16.
  probes::JobSpec spec = probes::test_store::SampleSpec();
  spec.name = "ssd-read";
  spec.filename = "/srv/probe/elsewhere";
  const std::string here = probes::JobFingerprint(spec);
  ASSERT_NE(here, Fingerprint("randread"));
  const LocalProbe local = Probe("ssd-read", here, "8:16", kSamsung, "5B2QGXA7");
  ScratchDir other_dir;
  auto other = Store::OpenInStateDir(other_dir.Path());
  ASSERT_TRUE(other);
  out.clear();
  ASSERT_TRUE(BaselineImport(*other, file, Host({local}), out)) << out;
  EXPECT_EQ(out, "imported 1 baseline from " + file +
                     " (pinned):\n  job \"ssd-read\" on 8:16 (\"Samsung SSD 980 PRO 1TB\" "
                     "(firmware 5B2QGXA7)) <- the baseline of job \"randread\" on 259:0 in " +
                     file + "\n");
  auto got = other->GetBaseline("ssd-read", here, "8:16");
  ASSERT_TRUE(got && *got);
  EXPECT_TRUE((*got)->pinned);
  EXPECT_EQ((*got)->baseline.model, kSamsung);
  EXPECT_EQ((*got)->baseline.metrics, (*store_->ListBaselines())[0].baseline.metrics);
}

TEST_F(BaselineCommandTest, ABaselineOfAnotherModelOrFirmwareIsRefusedNamingBoth) {
  PutLearned("randread", "259:0", {AddRun("randread", "259:0", kT0, 4000, 4e-4)}, 4000, 10, 4e-4,
             1e-5);
  const std::string file = (dir_.Path() / "golden.json").string();
  std::string out;
  ASSERT_TRUE(BaselineExport(*store_, file, Host({}, "5B2QGXA7"), out));
  const std::string fingerprint = Fingerprint("randread");
  ScratchDir other_dir;
  auto other = Store::OpenInStateDir(other_dir.Path());
  ASSERT_TRUE(other);

  auto model = BaselineImport(
      *other, file, Host({Probe("randread", fingerprint, "8:0", "WDC WD40EFRX-68N32N0")}), out);
  ASSERT_FALSE(model);
  EXPECT_EQ(model.error().message,
            "the baseline of job \"randread\" on 259:0 in " + file +
                " was taken on a \"Samsung SSD 980 PRO 1TB\" (firmware 5B2QGXA7), but job "
                "\"randread\" probes 8:0, a \"WDC WD40EFRX-68N32N0\": a baseline is pinned only "
                "on a disk of the model and firmware it was taken on; nothing imported");

  auto firmware = BaselineImport(
      *other, file, Host({Probe("randread", fingerprint, "8:0", kSamsung, "2B2QGXA7")}), out);
  ASSERT_FALSE(firmware);
  EXPECT_NE(firmware.error().message.find("a \"Samsung SSD 980 PRO 1TB\" (firmware 2B2QGXA7)"),
            std::string::npos)
      << firmware.error().message;
  EXPECT_TRUE(other->ListBaselines()->empty());

  // A disk whose firmware this host cannot read is compared by model alone.
  out.clear();
  ASSERT_TRUE(
      BaselineImport(*other, file, Host({Probe("randread", fingerprint, "8:0", kSamsung)}), out));
  EXPECT_EQ(other->ListBaselines()->size(), 1u);
}

TEST_F(BaselineCommandTest, ABaselineOfAWorkloadNoJobHereRunsIsSkippedOrRefused) {
  PutLearned("randread", "259:0", {AddRun("randread", "259:0", kT0, 4000, 4e-4)}, 4000, 10, 4e-4,
             1e-5);
  const std::string file = (dir_.Path() / "golden.json").string();
  std::string out;
  ASSERT_TRUE(BaselineExport(*store_, file, Host({}), out));
  ScratchDir other_dir;
  auto other = Store::OpenInStateDir(other_dir.Path());
  ASSERT_TRUE(other);
  const std::string other_workload = probes::JobFingerprint([] {
    probes::JobSpec spec;
    spec.block_size = 65536;
    return spec;
  }());
  auto none =
      BaselineImport(*other, file, Host({Probe("seq", other_workload, "8:0", kSamsung)}), out);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("none of the 1 baselines in " + file), std::string::npos);
  EXPECT_TRUE(other->ListBaselines()->empty());
}

TEST_F(BaselineCommandTest, ImportErrorsNameTheFileAndChangeNothing) {
  const std::string file = (dir_.Path() / "bad.json").string();
  std::ofstream(file) << "{\"iowatch_baselines\": 1, \"baselines\": [{\"job\": 3}]}\n";
  std::string out;
  auto bad = BaselineImport(*store_, file, Host({}), out);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().ToString().starts_with(file + ":1:")) << bad.error().ToString();
  EXPECT_TRUE(store_->ListBaselines()->empty());

  auto missing = BaselineImport(*store_, file + ".nope", Host({}), out);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  auto unwritable = BaselineExport(*store_, "/nonexistent-dir/x.json", Host({}), out);
  ASSERT_FALSE(unwritable);
  EXPECT_NE(unwritable.error().ToString().find("/nonexistent-dir/x.json"), std::string::npos);
}

TEST_F(BaselineCommandTest, AnEndlessImportStopsAt64MiB) {
  std::string out;
  auto endless = BaselineImport(*store_, "/dev/zero", Host({}), out);
  ASSERT_FALSE(endless);
  EXPECT_EQ(endless.error().ToString(),
            "/dev/zero: cannot read baseline JSON: longer than 67108864 bytes");
  EXPECT_TRUE(store_->ListBaselines()->empty());
}

// --- The whole command ----------------------------------------------------------

TEST_F(BaselineCommandTest, ExecuteOpensTheStoreInTheStateDir) {
  PutLearned("j", "259:0", {AddRun("j", "259:0", kT0, 1, 1e-4)}, 1, 0, 1e-4, 0);
  auto args = ParseBaselineArgs({"list", "--state.dir=" + dir_.Path().string()});
  ASSERT_TRUE(args);
  std::string out;
  ASSERT_TRUE(ExecuteBaseline(*args, DefaultBaselineContext(), out));
  EXPECT_TRUE(out.starts_with("JOB ")) << out;

  BaselineContext context = DefaultBaselineContext();
  context.now_unix_ms = [] { return kT0 + 42; };
  context.policy.runs = 1;  // capture's default N is the policy's
  args = ParseBaselineArgs({"--state.dir", dir_.Path().string(), "capture", "j"});
  ASSERT_TRUE(args);
  out.clear();
  ASSERT_TRUE(ExecuteBaseline(*args, context, out)) << out;
  EXPECT_TRUE((*store_->GetBaseline("j", Fingerprint("j"), "259:0"))->pinned);
}

TEST_F(BaselineCommandTest, AMissingStoreIsAnErrorAndIsNotCreated) {
  ScratchDir empty;
  auto args = ParseBaselineArgs({"list", "--state.dir=" + empty.Path().string()});
  ASSERT_TRUE(args);
  std::string out;
  auto listed = ExecuteBaseline(*args, DefaultBaselineContext(), out);
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().ToString(),
            "no store at " + empty.Db().string() +
                " (has `iowatch serve` run with --state.dir=" + empty.Path().string() + "?)");
  EXPECT_FALSE(std::filesystem::exists(empty.Db()));

  auto help = ParseBaselineArgs({"--help"});
  ASSERT_TRUE(help);
  out.clear();
  ASSERT_TRUE(ExecuteBaseline(*help, DefaultBaselineContext(), out));
  EXPECT_TRUE(out.starts_with("Usage: iowatch baseline")) << out;
}

}  // namespace
}  // namespace iowatch::daemon
