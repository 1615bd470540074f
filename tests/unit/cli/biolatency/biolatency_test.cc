// `iowatch biolatency`'s command line and reports on hand-made samples.
#include <gtest/gtest.h>

#include "cli/biolatency/biolatency_options.h"
#include "cli/biolatency/biolatency_report.h"

namespace iowatch::daemon {
namespace {

using collectors::bpf::BlockIoSample;
using collectors::bpf::BlockOp;
using collectors::bpf::BlockStage;
using collectors::bpf::DiskOp;
using collectors::bpf::LatencySlotOf;

TEST(BiolatencyArgs, OptionsIntervalAndCount) {
  auto o = ParseBiolatencyArgs({"-d", "vda", "-Q", "-o", "JSON", "2", "5"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->device, "vda");
  EXPECT_TRUE(o->queued);
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->interval_s, 2u);
  EXPECT_EQ(o->count, 5u);
  auto once = ParseBiolatencyArgs({});
  ASSERT_TRUE(once);
  EXPECT_EQ(once->count, 1u);
  EXPECT_EQ(once->interval_s, 1u);
  auto forever = ParseBiolatencyArgs({"-dsdb", "3"});
  ASSERT_TRUE(forever);
  EXPECT_EQ(forever->device, "sdb");
  EXPECT_FALSE(forever->count);
  EXPECT_EQ(ParseBiolatencyArgs({"-x"}).error().ToString(),
            "unknown option '-x' (usage: iowatch biolatency [-d DEV] [-Q] [-o JSON] [interval "
            "[count]])");
  EXPECT_EQ(ParseBiolatencyArgs({"-o", "XML"}).error().ToString(), "-o takes JSON, found 'XML'");
  EXPECT_EQ(ParseBiolatencyArgs({"0"}).error().ToString(),
            "interval must be from 1 to 86400 seconds");
  EXPECT_FALSE(ParseBiolatencyArgs({"1", "2", "3"}));
  EXPECT_FALSE(ParseBiolatencyArgs({"-d"}));
}

BlockIoSample Sample() {
  BlockIoSample s;
  const DiskOp read{254, 0, BlockOp::kRead};
  auto& device = s.latency[{read, BlockStage::kDevice}];
  device.count = 30;
  device.sum_ns = 30 * 100'000;
  device.slots[LatencySlotOf(100'000)] = 20;  // 98.304–114.688 µs
  device.slots[LatencySlotOf(150'000)] = 10;  // 131.072–163.84 µs
  auto& total = s.latency[{read, BlockStage::kTotal}];
  total = device;
  s.requests[read].requests = 30;
  s.requests[read].bytes = 30 * 4096;
  s.requests[read].random = 30;
  s.requests[read].size_slots[3] = 30;
  s.device_classes[read][0] = {30, 30 * 100'000, 30 * 4096};  // all small
  return s;
}

TEST(BiolatencyReport, TextShowsTheStagesSlotsFromFirstToLastWithBars) {
  const std::string text =
      FormatBiolatencyText(Sample(), BlockStage::kDevice, {{{254, 0}, "vda"}}, "T");
  EXPECT_NE(text.find("T  block I/O latency, stage device\n"), std::string::npos) << text;
  EXPECT_NE(text.find("disk = vda, op = read: 30 requests\n"), std::string::npos) << text;
  EXPECT_NE(text.find("98.304 -> 114.688 : 20         |****************************************|"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("131.072 -> 163.84 : 10         |********************                    |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("114.688 -> 131.072 : 0 "), std::string::npos) << text;  // between
  EXPECT_EQ(text.find("163.84 -> 196.608"), std::string::npos) << text;        // after the last
  // A disk without a name is shown by its numbers.
  EXPECT_NE(FormatBiolatencyText(Sample(), BlockStage::kDevice, {}, "T").find("disk = 254:0"),
            std::string::npos);
}

// Disk names (sysfs', or a fixture tree's) printed escaped.
TEST(BiolatencyReport, TextNamesTheDiskEscaped) {
  const std::string text =
      FormatBiolatencyText(Sample(), BlockStage::kDevice, {{{254, 0}, "vd\x1b[2J"}}, "T");
  EXPECT_NE(text.find("disk = vd\\x1b[2J, op = read"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
}

TEST(BiolatencyReport, JsonHasEveryStageSizesAndPatterns) {
  const std::string json = FormatBiolatencyJson(Sample(), {{{254, 0}, "vda"}}, "T", 1);
  EXPECT_NE(json.find(R"("device": "vda", "major": 254, "minor": 0, "op": "read")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("device": {"count": 30, "sum_seconds": 0.003, "buckets": [)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"low_seconds": 9.8304e-05, "high_seconds": 0.000114688, "count": 20})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("total": {"count": 30)"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("queue")"), std::string::npos) << json;  // no queue stage counted
  EXPECT_NE(json.find(R"("requests": {"requests": 30, "bytes": 122880, "sequential": 0, )"
                      R"("random": 30, "aligned": 0, "unaligned": 0, "sizes": [{"le_bytes": 4096, )"
                      R"("count": 30}]})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("device_classes": {"small": {"count": 30, "sum_seconds": 0.003, )"
                      R"("bytes": 122880}, "medium": {"count": 0, "sum_seconds": 0, "bytes": 0}, )"
                      R"("large": {"count": 0, "sum_seconds": 0, "bytes": 0}}}]})"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.back(), '\n');
}

// Every kind of loss is in the document, so that a count short of
// diskstats' says why (a run the kernel skipped, a full map).
TEST(BiolatencyReport, JsonSaysWhatTheProgramLost) {
  BlockIoSample s = Sample();
  s.lost_issues = 1;
  s.lost_series = 2;
  s.lost_cgroups = 3;
  s.lost_flushes = 4;
  s.lost_recursion = 5;
  const std::string json = FormatBiolatencyJson(s, {{{254, 0}, "vda"}}, "T", 1);
  EXPECT_NE(json.find(R"("lost": {"issue": 1, "series": 2, "cgroup": 3, "flush": 4, )"
                      R"("recursion": 5})"),
            std::string::npos)
      << json;
}

// A disk and op whose requests only ended in the interval (issued before
// it) have stages and no sizes: they are reported all the same.
TEST(BiolatencyReport, JsonHasOpsWithStagesAndNoSizes) {
  BlockIoSample s = Sample();
  const DiskOp write{254, 0, BlockOp::kWrite};
  s.latency[{write, BlockStage::kTotal}] =
      s.latency[{DiskOp{254, 0, BlockOp::kRead}, BlockStage::kTotal}];
  const std::string json = FormatBiolatencyJson(s, {{{254, 0}, "vda"}}, "T", 1);
  EXPECT_NE(json.find(R"("op": "write", "latency": {"total": {"count": 30)"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("requests": {"requests": 0, "bytes": 0, )"), std::string::npos) << json;
  // No device stage for the writes: no classes.
  EXPECT_EQ(json.find(R"("device_classes")", json.find(R"("op": "write")")), std::string::npos)
      << json;
}

}  // namespace
}  // namespace iowatch::daemon
