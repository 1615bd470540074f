// The sampler on a cciss tree, whose sysfs names ("cciss!c0d0") are not the
// kernel's ("cciss/c0d0"): the disk keeps its identity and its partition is
// filtered as a partition. Host pressure: its window maxima, and a kernel
// without PSI. Per-cgroup rates: a re-created cgroup starts again, a
// disabled collector reports nothing.
#include "daemon/sources/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

const FileTree kProcfs(iowatch::testing::FixturesDir() + "/cciss/proc");
const FileTree kSysfs(iowatch::testing::FixturesDir() + "/cciss/sys");

std::vector<std::string> DeviceNames(const Snapshot& s) {
  std::vector<std::string> names;
  for (const DeviceSnapshot& d : s.devices) names.push_back(d.name);
  return names;
}

TEST(Sampler, ACcissDiskKeepsItsIdentityAndItsPartitionIsAPartition) {
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(kProcfs, kSysfs, 1000);
  EXPECT_EQ(DeviceNames(*snapshot), (std::vector<std::string>{"cciss/c0d0", "sda"}));
  ASSERT_TRUE(snapshot->block_devices);
  const auto& info = *snapshot->block_devices;
  const auto disk = std::ranges::find(info, "cciss/c0d0", &collectors::BlockDevice::name);
  ASSERT_NE(disk, info.end());
  EXPECT_EQ(disk->model, "LOGICAL VOLUME");
  EXPECT_EQ(disk->major, 104u);
}

TEST(Sampler, PartitionsWhenAsked) {
  SamplerOptions options = TestSamplerOptions();
  options.partitions = true;
  Sampler sampler(std::move(options));
  const auto snapshot = sampler.Collect(kProcfs, kSysfs, 1000);
  EXPECT_EQ(DeviceNames(*snapshot),
            (std::vector<std::string>{"cciss/c0d0", "cciss/c0d0p1", "sda"}));
}

const CollectorStatus* StatusOf(const Snapshot& s, std::string_view name) {
  const auto found = std::ranges::find(s.collectors, name, &CollectorStatus::name);
  return found == s.collectors.end() ? nullptr : &*found;
}

TEST(Sampler, AKernelWithoutPsiFailsThePressureCollectorByFileAndNothingElse) {
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(kProcfs, kSysfs, 1000);  // the cciss tree has no pressure/
  const CollectorStatus* pressure = StatusOf(*snapshot, "pressure");
  ASSERT_NE(pressure, nullptr);
  EXPECT_FALSE(pressure->success);
  EXPECT_NE(pressure->error.find("cciss/proc/pressure/cpu"), std::string::npos) << pressure->error;
  for (const auto& resource : snapshot->pressure.resources) EXPECT_FALSE(resource);
  EXPECT_TRUE(StatusOf(*snapshot, "diskstats")->success);
}

TEST(Sampler, PressureAvg10KeepsItsMaximumOverTheWindowAsARatio) {
  std::string pattern = "/tmp/iowatch-pressure-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::copy(iowatch::testing::FixturesDir() + "/cciss/proc", root,
                        std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(root / "pressure");
  const auto write = [&](const char* io_avg10) {
    for (const char* resource : {"cpu", "memory"}) {
      std::ofstream(root / "pressure" / resource)
          << "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
    }
    std::ofstream(root / "pressure/io")
        << "some avg10=" << io_avg10 << " avg60=0.00 avg300=0.00 total=5\n"
        << "full avg10=1.00 avg60=0.00 avg300=0.00 total=2\n";
  };
  SamplerOptions options = TestSamplerOptions();
  options.interval_seconds = 1;
  options.window_seconds = 2;  // two samples
  Sampler sampler(std::move(options));
  const FileTree procfs(root);
  std::vector<double> maxima;
  for (const char* avg10 : {"40.26", "3.00", "7.50", "1.00"}) {
    write(avg10);
    const auto snapshot = sampler.Collect(procfs, kSysfs, 1000);
    ASSERT_TRUE(StatusOf(*snapshot, "pressure")->success) << StatusOf(*snapshot, "pressure")->error;
    ASSERT_TRUE(snapshot->pressure.resources[1]);
    EXPECT_FALSE(snapshot->pressure.resources[0]->full);
    maxima.push_back(snapshot->pressure.avg10_window_max[1][0]);
    EXPECT_EQ(snapshot->pressure.avg10_window_max[1][1], 0.01);
  }
  EXPECT_EQ(maxima, (std::vector<double>{0.4026, 0.4026, 0.075, 0.075}));
  std::filesystem::remove_all(root);
}

const std::string kTwo = iowatch::testing::FixturesDir() + "/metrics-two-samples";

const CgroupSeries* PairOf(const Snapshot& s, std::string_view cgroup, std::string_view device) {
  for (const CgroupSeries& c : s.cgroups.series) {
    if (c.cgroup == cgroup && c.device == device) return &c;
  }
  return nullptr;
}

TEST(Sampler, ACgroupRecreatedUnderItsNameStartsAgainWithoutRates) {
  std::string pattern = "/tmp/iowatch-cgroups-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::copy(kTwo, root, std::filesystem::copy_options::recursive);
  // In the second sample postgresql.service is new: its counters start low.
  std::ofstream(root / "s2/sys/fs/cgroup/system.slice/postgresql.service/io.stat")
      << "8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n";
  SamplerOptions options = TestSamplerOptions();
  options.interval_seconds = 2;
  options.filter = *collectors::DeviceFilter::Create("", "^loop\\d+$");
  Sampler sampler(std::move(options));
  sampler.Collect(FileTree(root / "s1/proc"), FileTree(root / "s1/sys"), 1000);
  const auto second = sampler.Collect(FileTree(root / "s2/proc"), FileTree(root / "s2/sys"), 1002);
  std::filesystem::remove_all(root);
  const CgroupSeries* pg = PairOf(*second, "system.slice/postgresql.service", "sda");
  ASSERT_NE(pg, nullptr);
  EXPECT_FALSE(pg->has_rates);
  EXPECT_EQ(pg->counters.read_bytes, 4096u);
  const CgroupSeries* slice = PairOf(*second, "system.slice", "sda");
  ASSERT_NE(slice, nullptr);
  ASSERT_TRUE(slice->has_rates);
  EXPECT_EQ(slice->latest[0], 1048576.0);                        // 2 MiB over 2.00 s
  EXPECT_EQ(PairOf(*second, "system.slice", "loop0"), nullptr);  // an excluded device
}

TEST(Sampler, DisabledCgroupsReportNoCollectorAndNoSeries) {
  SamplerOptions options = TestSamplerOptions();
  options.cgroups.enabled = false;
  Sampler sampler(std::move(options));
  const auto snapshot = sampler.Collect(FileTree(kTwo + "/s1/proc"), FileTree(kTwo + "/s1/sys"), 1);
  EXPECT_EQ(StatusOf(*snapshot, "cgroup"), nullptr);
  EXPECT_TRUE(snapshot->cgroups.series.empty());
  // Enabled on a tree without cgroups: the collector fails and says why.
  Sampler enabled(TestSamplerOptions());
  const auto none = enabled.Collect(kProcfs, kSysfs, 1);
  ASSERT_NE(StatusOf(*none, "cgroup"), nullptr);
  EXPECT_FALSE(StatusOf(*none, "cgroup")->success);
  EXPECT_NE(StatusOf(*none, "cgroup")->error.find("self/mountinfo"), std::string::npos)
      << StatusOf(*none, "cgroup")->error;
}

TEST(Sampler, ProcessIoGrowthIsSummedPerCgroupCutToTheDepth) {
  std::string pattern = "/tmp/iowatch-processes-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::copy(kTwo + "/s1/proc", root / "proc", std::filesystem::copy_options::recursive);
  const auto process = [&](const char* pid, const char* cgroup, uint64_t read, uint64_t write) {
    std::filesystem::create_directories(root / "proc" / pid);
    std::ofstream(root / "proc" / pid / "cgroup") << "0::/" << cgroup << "\n";
    std::ofstream(root / "proc" / pid / "io")
        << "read_bytes: " << read << "\nwrite_bytes: " << write << "\ncancelled_write_bytes: 0\n";
  };
  const auto uptime = [&](const char* text) { std::ofstream(root / "proc/uptime") << text; };
  SamplerOptions options = TestSamplerOptions();
  options.interval_seconds = 1;
  options.process_interval_seconds = 1;
  options.cgroups.max_depth = 2;
  Sampler sampler(std::move(options));
  const FileTree procfs(root / "proc"), sysfs(kTwo + "/s1/sys");
  uptime("100.00 50.00\n");
  process("812", "system.slice/postgresql.service/worker", 1000, 0);
  process("813", "system.slice/postgresql.service", 5000, 0);
  sampler.Collect(procfs, sysfs, 1);
  uptime("102.00 51.00\n");
  process("812", "system.slice/postgresql.service/worker", 1000 + (2 << 20), 4096);
  process("813", "system.slice/postgresql.service", 4000, 0);  // went back: another process
  process("814", "user.slice/user-1000.slice", 1 << 30, 0);    // new: all of it
  const auto second = sampler.Collect(procfs, sysfs, 2);
  std::filesystem::remove_all(root);
  ASSERT_EQ(second->process_io.series.size(), 2u);
  const ProcessIoSeries& pg = second->process_io.series[0];
  EXPECT_EQ(pg.cgroup, "system.slice/postgresql.service");
  EXPECT_EQ(pg.unit, "postgresql.service");
  // 812's growth, and 813 as a new process: all of its 4000 bytes.
  EXPECT_EQ(pg.read_bytes_total, (2u << 20) + 4000);
  EXPECT_EQ(pg.write_bytes_total, 4096u);
  ASSERT_TRUE(pg.has_rates);
  EXPECT_EQ(pg.read_bytes_per_second, ((2 << 20) + 4000) / 2.0);
  EXPECT_EQ(second->process_io.series[1].cgroup, "user.slice/user-1000.slice");
  EXPECT_EQ(second->process_io.series[1].read_bytes_total, 1u << 30);
  EXPECT_NE(StatusOf(*second, "process_io"), nullptr);
}

// A fixture procfs of processes, each with its cgroup, io and start time.
class ProcessTree {
 public:
  ProcessTree() {
    std::string pattern = "/tmp/iowatch-processes-XXXXXX";
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    std::filesystem::copy(kTwo + "/s1/proc", root_ / "proc",
                          std::filesystem::copy_options::recursive);
  }
  ~ProcessTree() { std::filesystem::remove_all(root_); }
  void Process(const std::string& pid, const std::string& cgroup, uint64_t read,
               uint64_t start_ticks, uint32_t ppid = 1) {
    const auto dir = root_ / "proc" / pid;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cgroup") << "0::/" << cgroup << "\n";
    std::ofstream(dir / "io") << "read_bytes: " << read
                              << "\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
    // A command name with a space and a parenthesis, as proc(5) allows.
    std::ofstream(dir / "stat") << pid << " (a (b) c) S " << ppid
                                << " 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 " << start_ticks
                                << " 1000 10 18446744073709551615\n";
  }
  void Exit(const std::string& pid) { std::filesystem::remove_all(root_ / "proc" / pid); }
  void Uptime(double seconds) { std::ofstream(root_ / "proc/uptime") << seconds << " 1.00\n"; }
  FileTree procfs() const { return FileTree(root_ / "proc"); }

 private:
  std::filesystem::path root_;
};

std::shared_ptr<const Snapshot> ReadProcesses(Sampler& sampler, ProcessTree& tree, uint64_t tick) {
  tree.Uptime(100.0 + static_cast<double>(tick));
  return sampler.Collect(tree.procfs(), FileTree(kTwo + "/s1/sys"), static_cast<double>(tick));
}

SamplerOptions ProcessOptions(size_t max_pairs = 2000) {
  SamplerOptions options = TestSamplerOptions();
  options.process_interval_seconds = 1;
  options.cgroups.max_depth = 2;
  options.cgroups.max_pairs = max_pairs;
  return options;
}

const ProcessIoSeries* ProcessSeriesOf(const Snapshot& s, std::string_view cgroup) {
  for (const ProcessIoSeries& p : s.process_io.series) {
    if (p.cgroup == cgroup) return &p;
  }
  return nullptr;
}

TEST(Sampler, AProcessMovedToAnotherCgroupTakesOnlyItsGrowthThere) {
  ProcessTree tree;
  Sampler sampler(ProcessOptions());
  tree.Process("900", "system.slice/a.service", 1 << 30, 5000);
  ReadProcesses(sampler, tree, 1);
  tree.Process("900", "system.slice/a.service", (1 << 30) + 100, 5000);
  ReadProcesses(sampler, tree, 2);
  // Moved (systemd-run --scope, a container's exec): the same pid and start.
  tree.Process("900", "system.slice/b.service", (1 << 30) + 100 + 4096, 5000);
  const auto snapshot = ReadProcesses(sampler, tree, 3);
  ASSERT_NE(ProcessSeriesOf(*snapshot, "system.slice/b.service"), nullptr);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/b.service")->read_bytes_total, 4096u);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/a.service")->read_bytes_total, 100u);
}

TEST(Sampler, APidReusedByAnotherProcessCountsAllOfTheNewOnesIo) {
  ProcessTree tree;
  Sampler sampler(ProcessOptions());
  tree.Process("901", "system.slice/a.service", 1 << 20, 5000);
  ReadProcesses(sampler, tree, 1);
  // Another process with the same pid, its counters above the old one's.
  tree.Process("901", "system.slice/a.service", (1 << 20) + 8192, 7000);
  const auto snapshot = ReadProcesses(sampler, tree, 2);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/a.service")->read_bytes_total,
            (1u << 20) + 8192);
}

TEST(Sampler, NewCgroupsTakeThePlaceOfGoneOnesBeyondTheCap) {
  ProcessTree tree;
  Sampler sampler(ProcessOptions(2));
  ReadProcesses(sampler, tree, 1);
  // Transient units one after another, each doing I/O and exiting.
  for (int unit = 0; unit < 5; ++unit) {
    const std::string pid = std::to_string(2000 + unit);
    const std::string cgroup = "system.slice/run-u" + std::to_string(unit) + ".service";
    tree.Process(pid, cgroup, 4096, 10 + static_cast<uint64_t>(unit));
    const auto snapshot = ReadProcesses(sampler, tree, 2 + static_cast<uint64_t>(unit));
    const ProcessIoSeries* series = ProcessSeriesOf(*snapshot, cgroup);
    ASSERT_NE(series, nullptr) << unit;
    EXPECT_EQ(series->read_bytes_total, 4096u);
    EXPECT_EQ(snapshot->process_io.dropped_series, 0u);
    tree.Exit(pid);
  }
  // Two cgroups with live processes hold both places: a third is dropped, said.
  tree.Process("3000", "system.slice/x.service", 0, 100);
  tree.Process("3001", "system.slice/y.service", 0, 101);
  ReadProcesses(sampler, tree, 10);
  tree.Process("3000", "system.slice/x.service", 1, 100);
  tree.Process("3001", "system.slice/y.service", 1, 101);
  tree.Process("3002", "system.slice/z.service", 1, 102);
  const auto snapshot = ReadProcesses(sampler, tree, 11);
  EXPECT_EQ(snapshot->process_io.series.size(), 2u);
  EXPECT_EQ(snapshot->process_io.dropped_series, 1u);
}

// A shell running a reader: the kernel adds the reaped child's counts to the
// shell's (wait_task_zombie). Counted once: what the child did while seen,
// and its last interval through the shell, not its whole life again.
TEST(Sampler, AReapedChildsIoIsNotCountedAgainInItsParent) {
  ProcessTree tree;
  Sampler sampler(ProcessOptions());
  tree.Process("500", "system.slice/job.service", 0, 100);
  tree.Process("501", "system.slice/job.service", 1 << 20, 101, 500);
  ReadProcesses(sampler, tree, 1);
  tree.Process("501", "system.slice/job.service", 3 << 20, 101, 500);
  auto snapshot = ReadProcesses(sampler, tree, 2);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/job.service")->read_bytes_total, 2u << 20);
  // The child read 1 MiB more, exited and was reaped: the shell now shows its 4 MiB.
  tree.Exit("501");
  tree.Process("500", "system.slice/job.service", 4 << 20, 100);
  snapshot = ReadProcesses(sampler, tree, 3);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/job.service")->read_bytes_total, 3u << 20);
  // A grandchild under a gone child: both reaped in turn into the shell.
  tree.Process("502", "system.slice/job.service", 0, 102, 500);
  tree.Process("503", "system.slice/job.service", 0, 103, 502);
  ReadProcesses(sampler, tree, 4);
  tree.Process("503", "system.slice/job.service", 1 << 20, 103, 502);
  snapshot = ReadProcesses(sampler, tree, 5);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/job.service")->read_bytes_total, 4u << 20);
  tree.Exit("503");
  tree.Exit("502");
  tree.Process("500", "system.slice/job.service", 5 << 20, 100);
  snapshot = ReadProcesses(sampler, tree, 6);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/job.service")->read_bytes_total, 4u << 20);
  // The shell's own I/O afterwards counts.
  tree.Process("500", "system.slice/job.service", (5 << 20) + 4096, 100);
  snapshot = ReadProcesses(sampler, tree, 7);
  EXPECT_EQ(ProcessSeriesOf(*snapshot, "system.slice/job.service")->read_bytes_total,
            (4u << 20) + 4096);
}

}  // namespace
}  // namespace iowatch::daemon
