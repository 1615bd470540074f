// The SMART source on the metrics fixture's disks (sda, sdb, sdc, nvme0n1,
// dm-0, verylongdevicename0) with a smartctl that answers from
// tests/fixtures/smart/ (fake-smartctl.sh): each disk's report arrives on a
// later sample than the one that started its run, a disk whose smartctl never
// answers (sdc) delays no sample and is killed at the timeout, dm-0 is never
// asked, and a disk without SMART says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon/sources/sampler.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

const std::string kTree = iowatch::testing::FixturesDir() + "/metrics-two-samples/s2";

const SmartSeries* Find(const Snapshot& s, std::string_view device) {
  const auto it = std::ranges::find(s.smart.devices, device, &SmartSeries::device);
  return it == s.smart.devices.end() ? nullptr : &*it;
}

SamplerOptions Options() {
  SamplerOptions o;
  o.filesystems.enabled = false;
  o.smart.enabled = true;
  o.smart.timeout_seconds = 1;
  o.smart.command = {"sh", iowatch::testing::FixturesDir() + "/smart/fake-smartctl.sh"};
  o.filter = *collectors::DeviceFilter::Create("", "^(loop|ram|zram|fd)\\d+$");
  return o;
}

TEST(SmartSource, ReportsArriveWithoutWaitingAndAHungDiskIsKilledAtTheTimeout) {
  Sampler sampler(Options());
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  auto start = std::chrono::steady_clock::now();
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  double worst = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0;
       i < 300 && (Find(*snapshot, "sda") == nullptr || Find(*snapshot, "sdc") == nullptr); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    start = std::chrono::steady_clock::now();
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
    worst = std::max(
        worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  EXPECT_LT(worst, 0.5);  // no sample waited for smartctl, the hung one included

  const SmartSeries* sda = Find(*snapshot, "sda");
  ASSERT_NE(sda, nullptr);
  EXPECT_TRUE(sda->error.empty()) << sda->error;
  ASSERT_TRUE(sda->report.has_value());
  EXPECT_EQ(sda->report->model, "WDC WD40EFRX-68N32N0");
  ASSERT_NE(Find(*snapshot, "nvme0n1"), nullptr);
  EXPECT_EQ(Find(*snapshot, "nvme0n1")->report->nvme->unsafe_shutdowns, 17u);
  ASSERT_NE(Find(*snapshot, "sdb"), nullptr);
  EXPECT_EQ(Find(*snapshot, "sdb")->report->scsi.grown_defects, 12u);
  EXPECT_EQ(Find(*snapshot, "dm-0"), nullptr);  // a dm device has no SMART of its own

  const SmartSeries* hung = Find(*snapshot, "sdc");
  ASSERT_NE(hung, nullptr);
  EXPECT_NE(hung->error.find("did not answer within 1 s: killed"), std::string::npos)
      << hung->error;
  const SmartSeries* none = Find(*snapshot, "verylongdevicename0");
  ASSERT_NE(none, nullptr);
  EXPECT_NE(none->error.find("Unable to detect device type"), std::string::npos) << none->error;

  const auto status = std::ranges::find(snapshot->collectors, "smart", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_TRUE(status->success);  // some disks gave their health
}

// Children of this process, from /proc (the runs smartctl is started as).
size_t Children() {
  size_t n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid = 0; children >> pid;) ++n;
  }
  return n;
}

TEST(SmartSource, AtMostFourRunsAtOnceAndEveryDiskHasItsTurn) {
  SamplerOptions o = Options();
  // Every run takes 0.3 s, then answers as the fixture does (sdc never).
  o.smart.timeout_seconds = 5;
  o.smart.command = {
      "sh", "-c",
      "sleep 0.3; exec sh " + iowatch::testing::FixturesDir() + "/smart/fake-smartctl.sh \"$@\"",
      "smartctl"};
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  const size_t before = Children();
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  EXPECT_EQ(Children() - before, 4u);  // five disks may have SMART: four started
  size_t most = 4;
  for (int i = 0; i < 100 && Find(*snapshot, "verylongdevicename0") == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
    most = std::max(most, Children() - before);
  }
  EXPECT_EQ(most, 4u);
  for (const char* disk : {"sda", "sdb", "nvme0n1", "verylongdevicename0"}) {
    EXPECT_NE(Find(*snapshot, disk), nullptr) << disk;  // the fifth had its turn
  }
}

TEST(SmartSource, NoDiskWithHealthFailsTheCollectorWithTheCause) {
  SamplerOptions o = Options();
  o.smart.command = {"/nonexistent/smartctl"};
  Sampler sampler(o);
  const auto snapshot = sampler.Collect(FileTree(kTree + "/proc"), FileTree(kTree + "/sys"), 1000);
  const auto status = std::ranges::find(snapshot->collectors, "smart", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_FALSE(status->success);
  EXPECT_NE(status->error.find("/nonexistent/smartctl"), std::string::npos) << status->error;
}

}  // namespace
}  // namespace iowatch::daemon
