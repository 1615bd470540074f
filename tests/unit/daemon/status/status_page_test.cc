#include "daemon/status/status_page.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collectors/md/mdstat.h"
#include "collectors/thin_pool/thin_pool.h"
#include "common/utf8.h"
#include "daemon/sampling/derived_series.h"

namespace iowatch::daemon {
namespace {

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A device whose every iostat series is `value` (so any column shows it).
// Each row is on the page, in this order.
void ExpectRowsInOrder(const std::string& html, const std::vector<std::string>& rows) {
  size_t previous = 0;
  for (const std::string& row : rows) {
    const size_t at = html.find(row);
    ASSERT_NE(at, std::string::npos) << row << "\n" << html;
    EXPECT_GE(at, previous) << row;
    previous = at;
  }
}

DeviceSnapshot Device(std::string name, double value) {
  DeviceSnapshot d;
  d.name = std::move(name);
  d.has_rates = true;
  d.latest.assign(IostatSeriesTable().size(), value);
  d.window_max.assign(IostatSeriesTable().size(), value * 2);
  return d;
}

Snapshot Sample() {
  Snapshot s;
  s.window_seconds = 60;
  s.devices = {Device("sda", 0.5), Device("<vd&b>", 0.25)};
  DeviceSnapshot fresh;
  fresh.name = "sdc";
  s.devices.push_back(fresh);  // its first sample: no rates yet
  s.has_vm_rates = true;
  s.vm_latest.assign(VmstatSeriesTable().size(), 0);
  // vmstat "r": the first series.
  s.vm_latest[0] = 3;
  return s;
}

ProbeSnapshot Probes() {
  ProbeSnapshot p;
  p.store_up = true;
  ProbeJobSnapshot slow;
  slow.name = "randread-4k";
  slow.last_run_timestamp_seconds = 990;
  slow.last_metrics = {{"read", "iops", 500},
                       {"read", "lat_p50_seconds", 0.0001},
                       {"read", "lat_p99_seconds", 0.002}};
  slow.has_baseline = true;
  slow.last_judged = true;
  slow.baseline = {{"read", "iops", 1000, 10}, {"read", "lat_p99_seconds", 0.001, 0.0001}};
  probes::MetricVerdict iops_verdict;
  iops_verdict.op = "read";
  iops_verdict.metric = "iops";
  probes::MetricVerdict p99_verdict = iops_verdict;
  p99_verdict.metric = "lat_p99_seconds";
  slow.verdicts = {{iops_verdict, true, {}}, {p99_verdict, false, {}}};
  slow.recent = {{"read", {0.001, 0.0011, 0.001, 0.002}}};
  ProbeJobSnapshot learning;
  learning.name = "seqread";
  learning.last_run_timestamp_seconds = 995;
  learning.last_metrics = {{"read", "iops", 80}, {"read", "lat_p99_seconds", 0.05}};
  learning.recent = {{"read", {0.05}}};
  ProbeJobSnapshot never;
  never.name = "randwrite";
  ProbeJobSnapshot busy;
  busy.name = "busy<disk>";
  busy.last_run_timestamp_seconds = 998;
  busy.last_metrics = {{"read", "iops", 300}};
  busy.recent = {{"read", {0.05}}};
  busy.last_class.run_class = probes::RunClass::kContended;
  busy.last_class.band = 4;
  busy.last_class.load = "others did 1200 IOPS (4.7 MB/s, 31 % of the disk's work)";
  busy.last_not_judged = "contended (others did 1200 IOPS): load band 6 has no baseline yet";
  p.jobs = {slow, learning, never, busy};
  return p;
}

TEST(StatusPage, DevicesWithTheirIostatColumnsEscaped) {
  const Snapshot s = Sample();
  const std::string html = RenderStatusPage({.sample = s,
                                             .probes = nullptr,
                                             .listen_endpoint = "127.0.0.1:9860",
                                             .now_seconds = 0,
                                             .own_cgroup = ""});
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<meta http-equiv=\"refresh\" content=\"10\">"), std::string::npos);
  EXPECT_NE(html.find("<h2>Devices (3)</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>sda</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;vd&amp;b&gt;</td>"), std::string::npos);
  EXPECT_EQ(html.find("<vd&b>"), std::string::npos);
  // sda: r/s 0.50, rkB/s 0.5/1024, r_await 500 ms, %util 50, window max 100.
  EXPECT_NE(html.find("<td>sda</td><td class=\"n\">0.50</td><td class=\"n\">0.00</td>"
                      "<td class=\"n\">500.00</td>"),
            std::string::npos)
      << html;
  // No block device known for it: no health said.
  EXPECT_NE(html.find("<td class=\"n\">50.00</td><td class=\"n\">100.00</td>"
                      "<td class=\"dim\">-</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>sdc</td><td colspan=\"9\" class=\"dim\">first sample"),
            std::string::npos);
  EXPECT_EQ(html.find("id=\"probes\""), std::string::npos) << "no probes configured";
  // No external asset, no script.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(StatusPage, EachDiskHasItsHealthItsFirstProblemAndTheRestInTheTitle) {
  Snapshot s = Sample();
  collectors::BlockDevice sda;
  sda.name = "sda";
  sda.major = 8;
  sda.transport = "scsi";
  collectors::BlockDevice vdb = sda;
  vdb.name = "<vd&b>";
  vdb.minor = 16;
  vdb.transport = "virtio";
  s.block_devices =
      std::make_shared<const std::vector<collectors::BlockDevice>>(std::vector{sda, vdb});
  s.collectors.push_back({"smart", 0, true, 0, {}, {}});
  collectors::SmartReport failing;
  failing.passed = false;
  s.smart.devices = {{"sda", failing, ""}, {"<vd&b>", std::nullopt, "no <SMART>"}};
  s.kmsg.errors = {{"sda", "write", "I/O", false, 3}};
  ProbeSnapshot probes = Probes();
  probes.jobs[0].target_major = 8;  // randread-4k, regressed on its IOPS, ran on sda
  const std::string html = RenderStatusPage({.sample = s,
                                             .probes = &probes,
                                             .listen_endpoint = "x",
                                             .now_seconds = 1000,
                                             .own_cgroup = ""});
  EXPECT_NE(html.find("<th>health</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"bad\" title=\"SMART overall-health self-assessment: FAILED; "
                      "3 I/O error(s) on write requests in the kernel log; probe randread-4k: "
                      "regressed\">SMART overall-health self-assessment: FAILED (+2)</td></tr>"),
            std::string::npos)
      << html;
  // No SMART is not a problem; the state is said, escaped.
  EXPECT_NE(html.find("<td class=\"good\">ok <span class=\"dim\">(SMART unavailable)</span>"),
            std::string::npos);
  EXPECT_EQ(html.find("no <SMART>"), std::string::npos);
}

TEST(StatusPage, BlockLatencyShowsEachDiskAndOpsQuantilesByStage) {
  namespace bpf = collectors::bpf;
  Snapshot s = Sample();
  const auto page = [&] {
    return RenderStatusPage({.sample = s,
                             .probes = nullptr,
                             .listen_endpoint = "",
                             .now_seconds = 0,
                             .own_cgroup = ""});
  };
  EXPECT_EQ(Count(page(), "id=\"block-latency\""), 0u);  // collector off: no table
  s.block_io.latency = {
      {"sda", bpf::BlockOp::kRead, bpf::BlockStage::kDevice, 10, 0, {}, 20.48e-6, 3.072e-3},
      {"sda", bpf::BlockOp::kRead, bpf::BlockStage::kTotal, 10, 0, {}, 24.576e-6, 4.096e-3},
      {"sda", bpf::BlockOp::kWrite, bpf::BlockStage::kTotal, 3, 0, {}, {}, {}},  // idle interval
  };
  const std::string html = page();
  EXPECT_NE(html.find("<tr><td>sda</td><td>read</td><td class=\"n\">20.5</td><td "
                      "class=\"n\">3072.0</td><td class=\"n\">24.6</td><td "
                      "class=\"n\">4096.0</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>sda</td><td>write</td><td class=\"dim\">–</td>"), std::string::npos)
      << html;
}

// The passive judge's table: a regressed series with its ratio against the
// bound and since when, one still learning, none at all without the judge.
TEST(StatusPage, ThePassiveJudgeShowsEachSeriesStateAndRatio) {
  const Snapshot s = Sample();
  PassiveSnapshot passive;
  PassiveSeriesRow slow;
  slow.device = "sda";
  slow.op = "read";
  slow.size = "all";
  slow.last.window.requests = 6000;
  slow.last.window.mean_seconds = 0.0004;
  probes::PassiveVerdict judged;
  judged.predicted_seconds = 0.0002;
  judged.ratio = 2;
  judged.bound_ratio = 1.2;
  judged.bad = true;
  slow.last.reason = probes::PassiveReason::kJudged;
  slow.last.bad = true;
  slow.judged = judged;
  slow.regressed = true;
  slow.regressed_since_ms = int64_t{1'700'000'000} * 1000;  // 22:13 UTC
  slow.windows[static_cast<size_t>(probes::PassiveReason::kJudged)] = 3;
  slow.windows[static_cast<size_t>(probes::PassiveReason::kLearning)] = 60;
  slow.windows[static_cast<size_t>(probes::PassiveReason::kTooFewRequests)] = 9;
  PassiveSeriesRow learning = slow;
  learning.device = "sdb";
  learning.judged.reset();
  learning.regressed = false;
  learning.last.reason = probes::PassiveReason::kLearning;
  learning.windows = {};
  learning.windows[static_cast<size_t>(probes::PassiveReason::kLearning)] = 12;
  PassiveSeriesRow drifted = slow;
  drifted.device = "sdc";
  drifted.drift_raised = true;
  drifted.drift_ratio = 1.125;
  passive.series = {slow, learning, drifted};
  const auto page = [&](const PassiveSnapshot* p) {
    return RenderStatusPage({.sample = s,
                             .probes = nullptr,
                             .passive = p,
                             .listen_endpoint = "",
                             .now_seconds = 0,
                             .own_cgroup = ""});
  };
  EXPECT_EQ(Count(page(nullptr), "id=\"passive\""), 0u);
  const std::string html = page(&passive);
  EXPECT_NE(html.find("<tr><td>sda</td><td>read</td><td>all</td><td>diskstats</td>"
                      "<td class=\"n\">6000</td>"
                      "<td class=\"n\">400.0</td><td class=\"n\">200.0</td>"
                      "<td class=\"n bad\">2.00 / 1.20</td>"
                      "<td class=\"bad\">slower than its past since 22:13 UTC</td>"
                      "<td class=\"n\">5 %</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"dim\">learning (12 minutes)</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"bad\">1.12× its first day (drift) since 22:13 UTC</td>"),
            std::string::npos)
      << html;
}

TEST(StatusPage, AdviceListsTheFindingsWorstFirstOrNothing) {
  const auto page = [](const Snapshot& s) {
    return RenderStatusPage({.sample = s,
                             .probes = nullptr,
                             .listen_endpoint = "",
                             .now_seconds = 0,
                             .own_cgroup = ""});
  };
  EXPECT_EQ(page(Sample()).find("<h2>Advice</h2>"), std::string::npos);  // nothing to say
  Snapshot s = Sample();
  collectors::BlockDevice disk;
  disk.name = "sd<b>";
  disk.queue.physical_block_size = 4096;
  disk.queue.read_ahead_kb = 8192;
  collectors::BlockDevice part;
  part.name = "sd<b>1";
  part.is_partition = true;
  part.parent = "sd<b>";
  part.start_sector = 63;
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(
      std::vector<collectors::BlockDevice>{disk, part});
  DeviceSnapshot counters;
  counters.name = "sd<b>";
  counters.counters.reads = 10'000;
  counters.counters.read_sectors = 10'000 * 8;  // 4 KiB reads under 8 MiB read-ahead
  s.devices = {counters};
  const std::string html = page(s);
  const size_t critical = html.find(
      "<td class=\"bad\">critical</td><td>sd&lt;b&gt;1</td><td>"
      "partition_misaligned</td>");
  const size_t info = html.find(
      "<td class=\"dim\">info</td><td>sd&lt;b&gt;</td><td>"
      "read_ahead_mismatch</td>");
  EXPECT_NE(critical, std::string::npos) << html;
  EXPECT_NE(info, std::string::npos) << html;
  EXPECT_LT(critical, info);  // worst first
  EXPECT_NE(html.find("echo 128 &gt; /sys/block/sd&lt;b&gt;/queue/read_ahead_kb"),
            std::string::npos);
}

// A label with control bytes (a terminal escape, a C1
// control) or bytes that are not UTF-8 reached the page raw. It is shown
// visibly, the page stays valid UTF-8 with no control byte but its newlines.
TEST(StatusPage, ControlBytesAndInvalidUtf8InNamesAreShownVisibly) {
  Snapshot s = Sample();
  s.devices = {Device("sd\x1b]0;PWNED\a\xff\xc2\x85<", 0.5)};
  const std::string html = RenderStatusPage(
      {.sample = s, .probes = nullptr, .listen_endpoint = "", .now_seconds = 0, .own_cgroup = ""});
  EXPECT_NE(html.find("<td>sd\\x1B]0;PWNED\\x07\xef\xbf\xbd\\u0085&lt;</td>"), std::string::npos)
      << html;
  EXPECT_TRUE(IsValidUtf8(html));
  EXPECT_FALSE(std::ranges::any_of(html, [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f;
  }));
}

// Under a regressed metric, one row explains it: how much worse, since
// when, against which runs under what load beside the judged run's, and what
// else its disk shows now (its problems but the regression itself, SMART,
// the busiest other cgroup on it: never the daemon's own).
TEST(StatusPage, ARegressionExplainsItselfUnderItsProbe) {
  Snapshot s = Sample();
  collectors::BlockDevice sda;
  sda.name = "sda";
  sda.major = 8;
  sda.transport = "scsi";
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(std::vector{sda});
  s.collectors.push_back({"smart", 0, true, 0, {}, {}});
  collectors::SmartReport passed;
  passed.passed = true;
  s.smart.devices = {{"sda", passed, ""}};
  s.kmsg.errors = {{"sda", "read", "I/O", false, 3}};
  s.cgroups.series = {
      {"/system.slice/iowatch.service", "iowatch.service", "sda", {}, true, {}, {9e8, 0, 0, 0}},
      {"/system.slice/pg.service", "pg.service", "sda", {}, true, {}, {2e7, 5e6, 0, 0}},
  };
  ProbeSnapshot probes = Probes();
  ProbeJobSnapshot& job = probes.jobs[0];  // randread-4k, regressed on its IOPS, on sda
  job.target_major = 8;
  job.verdicts[0].verdict.ratio = 0.5;
  job.verdicts[0].drift_ratio = 0.87;
  job.verdicts[0].since_ms = 1'796'379'300'000;  // 2026-12-04T10:15:00Z
  job.judged_baseline_runs =
      probes::RunsSummary{10, 1'796'112'000'000, 1'796'119'200'000, 10, 12.4, 0.01};
  job.judged_load = probes::RunLoad{850, 0.03};
  const std::string html = RenderStatusPage({.sample = s,
                                             .probes = &probes,
                                             .listen_endpoint = "x",
                                             .now_seconds = 1000,
                                             .own_cgroup = "/system.slice/iowatch.service"});
  EXPECT_EQ(Count(html, "<tr class=\"explain\">"), 1u) << "one row per regressed metric";
  EXPECT_NE(html.find("<tr class=\"explain\"><td></td><td colspan=\"11\"><span "
                      "class=\"bad\">read iops</span> 0.50x its baseline, 0.87x its first day; "
                      "bad since 2026-12-04T10:15:00Z; judged against 10 runs of "
                      "2026-12-01T08:00:00Z to 2026-12-01T10:00:00Z (load 12/s, steal 1.0 %); "
                      "the judged run: load 850/s, steal 3.0 %; sda now: 3 I/O error(s) on read "
                      "requests in the kernel log (SMART passed); others in the last 60 s: "
                      "pg.service up to 25.0 MB/s</td></tr>"),
            std::string::npos)
      << html;
}

TEST(StatusPage, TopIoListsTheBusiestCgroupsEscapedWithoutAnEmptyTable) {
  Snapshot s = Sample();
  EXPECT_EQ(Count(RenderStatusPage({.sample = s,
                                    .probes = nullptr,
                                    .listen_endpoint = "",
                                    .now_seconds = 0,
                                    .own_cgroup = ""}),
                  "id=\"top-io\""),
            0u);  // no cgroup series: no table
  s.cgroups.series = {
      {"system.slice/<b>.service", "<b>.service", "sda", {}, true, {2048, 0, 2, 0}, {}},
      {"system.slice/pg.service", "pg.service", "sda", {}, true, {1048576, 4096, 256, 1}, {}},
  };
  s.cgroups.pressure = {{"system.slice/pg.service", "pg.service", {{12.5, 0, 0, 0}, {}}}};
  const std::string page = RenderStatusPage(
      {.sample = s, .probes = nullptr, .listen_endpoint = "", .now_seconds = 0, .own_cgroup = ""});
  const size_t table = page.find("id=\"top-io\"");
  ASSERT_NE(table, std::string::npos);
  const size_t pg = page.find("system.slice/pg.service", table);
  const size_t b = page.find("system.slice/&lt;b&gt;.service", table);
  ASSERT_NE(pg, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(pg, b);                                                            // busiest first
  EXPECT_NE(page.find("<td class=\"n\">1024.0</td>", pg), std::string::npos);  // rkB/s
  EXPECT_NE(page.find("<td class=\"n\">12.50</td>", pg), std::string::npos);   // %psi
}

TEST(StatusPage, VmstatLine) {
  const Snapshot s = Sample();
  const std::string html = RenderStatusPage(
      {.sample = s, .probes = nullptr, .listen_endpoint = "", .now_seconds = 0, .own_cgroup = ""});
  EXPECT_NE(html.find("<table id=\"vmstat\"><tr><th>r</th><th>b</th>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"n\">3</td><td class=\"n\">0</td>"), std::string::npos)
      << html;
}

// Silence made visible: how much of the last day was judged, the last
// judged run and the commonest reason for the rest; a day without a
// verdict is marked.
TEST(StatusPage, HowMuchOfTheLastDayWasJudged) {
  const Snapshot s = Sample();
  ProbeSnapshot p = Probes();
  p.jobs[0].judging = {96, 24, {{"cpu_contended", 60}, {"learning", 12}}, 1000 * (86400 - 8000)};
  p.jobs[1].judging = {10, 0, {{"learning", 10}}, 0};
  const std::string html = RenderStatusPage(
      {.sample = s, .probes = &p, .listen_endpoint = "", .now_seconds = 86400, .own_cgroup = ""});
  EXPECT_NE(html.find("<td class=\"dim\">25 % of 96 runs; last 2h13m ago; mostly "
                      "cpu_contended</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"bad\">0 % of 10 runs; never judged; mostly learning</td>"),
            std::string::npos)
      << html;
}

// A contended run judged against runs of other conditions says against
// what, not a band it does not have.
TEST(StatusPage, ARunJudgedAgainstOtherConditionsSaysAgainstWhat) {
  const Snapshot s = Sample();
  ProbeSnapshot p = Probes();
  ProbeJobSnapshot& job = p.jobs[0];
  job.verdicts.clear();
  job.last_judged = true;
  job.last_class = {probes::RunClass::kContended, probes::kNoBand, "the hypervisor took 20 %"};
  job.last_against = "the load model at its stress (200 runs)";
  const std::string html = RenderStatusPage(
      {.sample = s, .probes = &p, .listen_endpoint = "", .now_seconds = 1000, .own_cgroup = ""});
  EXPECT_NE(html.find("<td class=\"good\">ok (against the load model at its stress (200 runs): "
                      "the hypervisor took 20 %)</td>"),
            std::string::npos)
      << html;
}

TEST(StatusPage, ProbesBesideTheirBaselinesWithState) {
  const Snapshot s = Sample();
  const ProbeSnapshot p = Probes();
  const std::string html = RenderStatusPage(
      {.sample = s, .probes = &p, .listen_endpoint = "", .now_seconds = 1000, .own_cgroup = ""});
  EXPECT_EQ(Count(html, "<tr class=\"probe\">"), 4u);
  // Why the last run of a busy disk was not judged.
  EXPECT_NE(html.find("<td class=\"dim\">not judged: contended (others did 1200 IOPS): load band "
                      "6 has no baseline yet</td>"),
            std::string::npos)
      << html;
  // randread-4k: IOPS 500 against 1000, p99 2000 µs against 1000, ratio 0.50, iops regressed.
  EXPECT_NE(html.find("<td>randread-4k</td><td>read</td><td>10 s ago</td><td class=\"n\">500</td>"
                      "<td class=\"n\">1000</td><td class=\"n\">100.0</td>"
                      "<td class=\"n\">2000.0</td><td class=\"n\">1000.0</td>"
                      "<td class=\"n\">0.50</td><td class=\"bad\">regressed: iops</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"dim\">learning the baseline</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>randwrite</td><td colspan=\"11\" class=\"dim\">no successful run"),
            std::string::npos);
  // No run in the last day counted yet: said so.
  EXPECT_NE(html.find("<td class=\"dim\">no run in 24 h</td>"), std::string::npos);
  EXPECT_EQ(Count(html, "<svg class=\"spark\""), 1u) << "one run is no line";
  EXPECT_NE(html.find("<span class=\"good\">writable</span>"), std::string::npos);
}

// /proc/mdstat with a degraded raid1 recovering, its failed member, and a healthy one.
constexpr std::string_view kStatusMdstat =
    "md6 : active raid1 sdb2[2](F) sdc[1] sda2[0]\n"
    "      195310144 blocks [2/1] [U_]\n"
    "      [=>...................]  recovery =  8.5% (16775552/195310144) finish=17.0min "
    "speed=259783K/sec\n"
    "md0 : active raid1 sdi1[0] sdj1[1]\n"
    "      248896 blocks [2/2] [UU]\n";

std::string PageOf(const Snapshot& s) {
  return RenderStatusPage(
      {.sample = s, .probes = nullptr, .listen_endpoint = "", .now_seconds = 0, .own_cgroup = ""});
}

TEST(StatusPage, RaidArraysShowStateDegradedFailedMembersAndSyncOnlyWhenThereAreAny) {
  Snapshot s = Sample();
  EXPECT_EQ(PageOf(s).find("RAID arrays"), std::string::npos);
  auto arrays = collectors::ParseMdstat(kStatusMdstat, "/proc/mdstat");
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  s.md.arrays = *arrays;
  const std::string html = PageOf(s);
  EXPECT_NE(html.find("<h2>RAID arrays (md)</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>md0</td><td>raid1</td><td class=\"good\">active</td>"
                      "<td class=\"good\">0</td><td class=\"dim\">none</td>"
                      "<td class=\"dim\">none</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>md6</td><td>raid1</td><td class=\"good\">active</td>"
                      "<td class=\"bad\">1 of 2</td><td class=\"bad\">sdb2</td>"
                      "<td>recovery 8.6 % done, 17 min left at 253.7 MiB/s</td></tr>"),
            std::string::npos)
      << html;
}

// dmsetup's lines of a pool out of data space, one healthy, one failed.
constexpr std::string_view kStatusThinStatus =
    "vg0-full: 0 2097152 thin-pool 12 300/4096 16384/16384 - out_of_data_space discard_passdown "
    "queue_if_no_space - 3072\n"
    "vg1-ok: 0 2097152 thin-pool 3 120/4096 200/16384 - rw discard_passdown error_if_no_space - "
    "3072\n"
    "vg2-failed: 0 2097152 thin-pool Fail\n";
constexpr std::string_view kStatusThinTable =
    "vg0-full: 0 2097152 thin-pool 253:1 253:2 128 0 0\n"
    "vg1-ok: 0 2097152 thin-pool 253:4 253:5 128 0 1 error_if_no_space\n";

TEST(StatusPage, ThinPoolsShowModeFillAndFlagsOnlyWhenThereAreAny) {
  Snapshot s = Sample();
  EXPECT_EQ(PageOf(s).find("Thin pools"), std::string::npos);
  auto statuses = collectors::ParseThinPoolStatus(kStatusThinStatus, "dmsetup status");
  auto tables = collectors::ParseThinPoolTable(kStatusThinTable, "dmsetup table");
  ASSERT_TRUE(statuses && tables);
  s.thin_pool.pools = collectors::JoinThinPools(*statuses, *tables);
  s.thin_pool.pools[0].device = "dm-3";
  const std::string html = PageOf(s);
  EXPECT_NE(html.find("<h2>Thin pools (LVM)</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>vg0-full</td><td>dm-3</td><td class=\"bad\">out_of_data_space</td>"
                      "<td class=\"bad\">100 % of 1.1 GB</td><td class=\"good\">7 % of 16.8 MB</td>"
                      "<td class=\"dim\">none</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>vg1-ok</td><td>-</td><td class=\"good\">rw</td>"
                      "<td class=\"good\">1 % of 1.1 GB</td><td class=\"good\">3 % of 16.8 MB</td>"
                      "<td>error_if_no_space</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>vg2-failed</td><td>-</td><td class=\"bad\">fail</td>"
                      "<td class=\"dim\">-</td><td class=\"dim\">-</td>"
                      "<td class=\"dim\">none</td></tr>"),
            std::string::npos)
      << html;
}

// The storage stack's tables: none without such devices; problems first.
TEST(StatusPage, NvmeControllersNotLiveComeFirst) {
  Snapshot s = Sample();
  EXPECT_EQ(PageOf(s).find("NVMe controllers"), std::string::npos);
  s.nvme.controllers = {
      {.name = "nvme0",
       .model = "Samsung SSD 970 PRO 512GB",
       .firmware_rev = "1B2QEXP7",
       .state = "live",
       .namespaces = {{.name = "nvme0n1"}}},
      {.name = "nvme1",
       .model = "INTEL SSDPE2KX020T8",
       .firmware_rev = "VDV10184",
       .state = "resetting",
       .namespaces = {{.name = "nvme1n1"}}},
      {.name = "nvme2", .model = "WUS5EA138ESP7E3", .firmware_rev = "RC610004", .state = "dead"}};
  const std::string html = PageOf(s);
  const std::string live =
      "<tr><td>nvme0</td><td class=\"good\">live</td><td>Samsung SSD 970 PRO 512GB</td>"
      "<td>1B2QEXP7</td><td>nvme0n1</td></tr>";
  const std::string resetting =
      "<tr><td>nvme1</td><td class=\"bad\">resetting</td><td>INTEL SSDPE2KX020T8</td>"
      "<td>VDV10184</td><td>nvme1n1</td></tr>";
  const std::string dead =
      "<tr><td>nvme2</td><td class=\"bad\">dead</td><td>WUS5EA138ESP7E3</td><td>RC610004</td>"
      "<td class=\"dim\">none</td></tr>";
  EXPECT_NE(html.find("<h2>NVMe controllers</h2>"), std::string::npos) << html;
  ExpectRowsInOrder(html, {resetting, dead, live});
}

TEST(StatusPage, ZfsPoolsNotOnlineComeFirst) {
  Snapshot s = Sample();
  EXPECT_EQ(PageOf(s).find("ZFS pools"), std::string::npos);
  s.zfs.pools = {{.name = "pool1", .state = "ONLINE"},
                 {.name = "pool2", .state = "SUSPENDED"},
                 {.name = "poolz1", .state = "DEGRADED"}};
  const std::string html = PageOf(s);
  const std::string online = "<tr><td>pool1</td><td class=\"good\">ONLINE</td></tr>";
  const std::string suspended = "<tr><td>pool2</td><td class=\"bad\">SUSPENDED</td></tr>";
  const std::string degraded = "<tr><td>poolz1</td><td class=\"bad\">DEGRADED</td></tr>";
  EXPECT_NE(html.find("<h2>ZFS pools</h2>"), std::string::npos) << html;
  ExpectRowsInOrder(html, {suspended, degraded, online});
}

TEST(StatusPage, MultipathMapsWithAFailedPathComeFirstThenOnePathLeft) {
  Snapshot s = Sample();
  EXPECT_EQ(PageOf(s).find("Multipath maps"), std::string::npos);
  s.udev.multipath = {{"dm-0", "mpatha", {{"sdb", "running"}, {"sdc", "running"}}},
                      {"dm-1", "mpathb", {{"sdd", "running"}, {"sde", "offline"}}},
                      {"dm-2", "mpathc", {{"sdf", "running"}}}};
  const std::string html = PageOf(s);
  const std::string healthy =
      "<tr><td>mpatha</td><td>dm-0</td><td class=\"good\">2 of 2</td><td><span "
      "class=\"good\">sdb running</span>, <span class=\"good\">sdc running</span></td></tr>";
  const std::string failed =
      "<tr><td>mpathb</td><td>dm-1</td><td class=\"bad\">1 of 2</td><td><span "
      "class=\"good\">sdd running</span>, <span class=\"bad\">sde offline</span></td></tr>";
  const std::string one =
      "<tr><td>mpathc</td><td>dm-2</td><td class=\"bad\">1 of 1</td><td><span "
      "class=\"good\">sdf running</span></td></tr>";
  EXPECT_NE(html.find("<h2>Multipath maps</h2>"), std::string::npos) << html;
  ExpectRowsInOrder(html, {failed, one, healthy});
}

TEST(Sparkline, ScalesToTheRangeOldestFirst) {
  EXPECT_EQ(Sparkline({}, 100, 20), "");
  EXPECT_EQ(Sparkline({1.0}, 100, 20), "");
  const std::string svg = Sparkline({0.001, 0.002, 0.0015}, 101, 22);
  // x from 1 to width-1; the minimum at the bottom (y = height-1), the maximum at the top (y = 3).
  EXPECT_NE(svg.find("points=\"1.0,21.0 50.5,3.0 100.0,12.0\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>1000.0 µs to 2000.0 µs</title>"), std::string::npos) << svg;
  const std::string flat = Sparkline({0.5, 0.5}, 10, 10);
  EXPECT_NE(flat.find("points=\"1.0,9.0 9.0,9.0\""), std::string::npos) << flat;
}

}  // namespace
}  // namespace iowatch::daemon
