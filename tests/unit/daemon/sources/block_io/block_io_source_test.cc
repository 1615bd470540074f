// The block_io source in the sampler, on scripted readings of the program
// (a fake BlockIoCounters) over copies of the cgroup fixtures: what loads
// and when, what a failed load reports, which disks and stages are exported,
// the alignment units handed to the program, and per-cgroup attribution:
// ids named by their directories' inodes, counts summed into selected
// ancestors, a removed cgroup's counts kept by its parent and its entries
// forgotten, an unnamed one counted as unresolved.
#include "daemon/sources/block_io/block_io_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "daemon/sources/block_io/block_io_cgroups.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

namespace bpf = collectors::bpf;

// What the test scripts and what the source did to the program.
struct Script {
  bpf::BlockIoSample sample;
  std::map<uint32_t, uint32_t> alignment;  // KernelDev -> bytes
  std::vector<uint64_t> forgotten;
  std::vector<uint32_t> forgotten_disks;  // KernelDev
  int loads = 0;
  bool fail_load = false;
};

class FakeCounters : public bpf::BlockIoCounters {
 public:
  explicit FakeCounters(std::shared_ptr<Script> script) : script_(std::move(script)) {}
  Result<bpf::BlockIoSample> Read() const override { return script_->sample; }
  Status SetAlignment(uint32_t major, uint32_t minor, uint32_t bytes) override {
    if (bytes == 0) {
      script_->alignment.erase(bpf::KernelDev(major, minor));
    } else {
      script_->alignment[bpf::KernelDev(major, minor)] = bytes;
    }
    return {};
  }
  Status ForgetDisks(std::span<const uint32_t> devs) override {
    for (const uint32_t dev : devs) {
      script_->forgotten_disks.push_back(dev);
      const auto of_dev = [&](const bpf::DiskOp& d) {
        return bpf::KernelDev(d.major, d.minor) == dev;
      };
      std::erase_if(script_->sample.latency, [&](const auto& e) { return of_dev(e.first.first); });
      std::erase_if(script_->sample.requests, [&](const auto& e) { return of_dev(e.first); });
      std::erase_if(script_->sample.device_classes, [&](const auto& e) { return of_dev(e.first); });
      std::erase_if(script_->sample.errors,
                    [&](const auto& e) { return e.first.kernel_dev == dev; });
    }
    return {};
  }
  Status ForgetCgroups(std::span<const uint64_t> ids) override {
    for (const uint64_t id : ids) {
      script_->forgotten.push_back(id);
      std::erase_if(script_->sample.cgroups, [&](const auto& e) { return e.first.first == id; });
    }
    return {};
  }

 private:
  std::shared_ptr<Script> script_;
};

class BlockIoSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { UseTree("cgroup-v1", "sys/fs/cgroup/blkio"); }
  // A copy of a fixture tree whose cgroups (under `hierarchy`) the ids name.
  void UseTree(const std::string& fixture, const std::string& hierarchy) {
    if (!root_.empty()) std::filesystem::remove_all(root_);
    std::string pattern = "/tmp/iowatch-bpf-source-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    hierarchy_ = hierarchy;
    std::filesystem::copy(iowatch::testing::FixturesDir() + "/" + fixture, root_,
                          std::filesystem::copy_options::recursive);
    script_ = std::make_shared<Script>();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  SamplerOptions Options(bool enabled = true) {
    SamplerOptions options = TestSamplerOptions();
    options.settings.Set(kBpfEnabled, enabled);
    options.block_io.load = [script = script_]() -> Result<std::unique_ptr<bpf::BlockIoCounters>> {
      ++script->loads;
      if (script->fail_load) {
        return MakeError(ErrorCode::kUnsupported, "no kernel BTF", "/sys/kernel/btf/vmlinux");
      }
      return std::make_unique<FakeCounters>(script);
    };
    return options;
  }
  std::shared_ptr<const Snapshot> Collect(Sampler& sampler) {
    return sampler.Collect(FileTree(root_ / "proc"), FileTree(root_ / "sys"), 1000);
  }
  uint64_t IdOf(const std::string& cgroup) const {
    struct stat st {};
    const auto path = root_ / hierarchy_ / cgroup;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_ino;
  }
  void AddCgroupIo(uint64_t id, bpf::BlockOp op, uint64_t bytes, uint64_t requests,
                   uint32_t major = 254, uint32_t minor = 0) {
    bpf::CgroupIo& io = script_->sample.cgroups[{id, {major, minor, op}}];
    io.bytes += bytes;
    io.requests += requests;
  }

  std::filesystem::path root_;
  std::string hierarchy_;
  std::shared_ptr<Script> script_;
};

const CollectorStatus* StatusOf(const Snapshot& s) {
  const auto found = std::ranges::find(s.collectors, "bpf", &CollectorStatus::name);
  return found == s.collectors.end() ? nullptr : &*found;
}

const BlockCgroupSeries* Find(const Snapshot& s, std::string_view cgroup, bpf::BlockOp op) {
  for (const BlockCgroupSeries& c : s.block_io.cgroups) {
    if (c.cgroup == cgroup && c.op == op) return &c;
  }
  return nullptr;
}

TEST_F(BlockIoSourceTest, DisabledLoadsNothingAndReportsNothing) {
  Sampler sampler(Options(false));
  const auto snapshot = Collect(sampler);
  EXPECT_EQ(script_->loads, 0);
  EXPECT_EQ(StatusOf(*snapshot), nullptr);
  EXPECT_TRUE(snapshot->block_io.latency.empty());
}

TEST_F(BlockIoSourceTest, AFailedLoadNamesItsCauseAndIsRetriedOnlyAfterAReload) {
  script_->fail_load = true;
  Sampler sampler(Options());
  for (int i = 0; i < 3; ++i) {
    const auto snapshot = Collect(sampler);
    const CollectorStatus* status = StatusOf(*snapshot);
    ASSERT_NE(status, nullptr);
    EXPECT_FALSE(status->success);
    EXPECT_NE(status->error.find("no kernel BTF"), std::string::npos) << status->error;
    EXPECT_NE(status->error.find("/sys/kernel/btf/vmlinux"), std::string::npos) << status->error;
    EXPECT_TRUE(StatusOf(*snapshot) && snapshot->block_io.latency.empty());
  }
  EXPECT_EQ(script_->loads, 1);
  script_->fail_load = false;
  sampler.Reconfigure(Options());
  const auto snapshot = Collect(sampler);
  EXPECT_EQ(script_->loads, 2);
  EXPECT_TRUE(StatusOf(*snapshot)->success);
}

TEST_F(BlockIoSourceTest, DisksAndStagesAsConfiguredWithIntervalQuantiles) {
  bpf::LatencyHistogram h;
  h.count = 100;
  h.sum_ns = 100 * 20'000;
  h.slots[bpf::LatencySlotOf(20'000)] = 99;
  h.slots[bpf::LatencySlotOf(3'000'000)] = 1;
  h.coarse[1] = 99;  // ≤ 25 µs
  h.coarse[7] = 1;   // ≤ 2.5 ms
  for (const auto stage :
       {bpf::BlockStage::kQueue, bpf::BlockStage::kDevice, bpf::BlockStage::kTotal}) {
    script_->sample.latency[{{254, 0, bpf::BlockOp::kRead}, stage}] = h;
    script_->sample.latency[{{7, 3, bpf::BlockOp::kRead}, stage}] = h;  // loop3: filtered out
  }
  script_->sample.requests[{254, 0, bpf::BlockOp::kRead}].requests = 100;
  script_->sample.requests[{254, 0, bpf::BlockOp::kFlush}].requests = 4;
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  ASSERT_TRUE(StatusOf(*snapshot)->success) << StatusOf(*snapshot)->error;
  const auto& latency = snapshot->block_io.latency;
  ASSERT_EQ(latency.size(), 2u);  // vda read device and total: no queue stage, no loop3
  EXPECT_EQ(latency[0].device, "vda");
  EXPECT_EQ(latency[0].stage, bpf::BlockStage::kDevice);
  EXPECT_EQ(latency[1].stage, bpf::BlockStage::kTotal);
  EXPECT_EQ(latency[1].count, 100u);
  EXPECT_EQ(latency[1].coarse[7], 1u);
  EXPECT_DOUBLE_EQ(*latency[1].p50_seconds, 20'480e-9);  // the upper bound of 20 µs's slot
  ASSERT_EQ(snapshot->block_io.requests.size(), 1u);     // flushes have no sizes
  EXPECT_EQ(snapshot->block_io.requests[0].stats.requests, 100u);

  // The next interval: 10 requests, all at 3 ms.
  for (auto& [key, histogram] : script_->sample.latency) {
    histogram.count += 10;
    histogram.slots[bpf::LatencySlotOf(3'000'000)] += 10;
  }
  SamplerOptions with_queue = Options();
  with_queue.settings.Set(kBpfQueueStage, true);
  sampler.Reconfigure(std::move(with_queue));
  snapshot = Collect(sampler);
  ASSERT_EQ(snapshot->block_io.latency.size(), 3u);
  EXPECT_EQ(snapshot->block_io.latency[0].stage, bpf::BlockStage::kQueue);
  EXPECT_EQ(script_->loads, 1);  // a reload keeps the loaded program and its counts
  const auto [low, high] = bpf::LatencySlotBounds(bpf::LatencySlotOf(3'000'000));
  EXPECT_DOUBLE_EQ(*snapshot->block_io.latency[2].p50_seconds, static_cast<double>(*high) / 1e9);
  EXPECT_LE(static_cast<double>(low), 3e6);
}

TEST_F(BlockIoSourceTest, DisksNotWantedOrGoneLeaveTheProgramsMap) {
  bpf::LatencyHistogram h;
  h.count = 1;
  h.slots[0] = 1;
  script_->sample.latency[{{254, 0, bpf::BlockOp::kRead}, bpf::BlockStage::kTotal}] = h;
  script_->sample.latency[{{7, 3, bpf::BlockOp::kRead}, bpf::BlockStage::kTotal}] = h;
  script_->sample.requests[{7, 9, bpf::BlockOp::kWrite}].requests = 1;  // no such disk
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  EXPECT_EQ(script_->forgotten_disks,
            (std::vector<uint32_t>{bpf::KernelDev(7, 3), bpf::KernelDev(7, 9)}));
  ASSERT_EQ(snapshot->block_io.latency.size(), 1u);
  EXPECT_EQ(snapshot->block_io.latency[0].device, "vda");
  script_->forgotten_disks.clear();
  snapshot = Collect(sampler);  // the wanted disk stays
  EXPECT_TRUE(script_->forgotten_disks.empty());
  EXPECT_EQ(snapshot->block_io.latency.size(), 1u);
}

TEST_F(BlockIoSourceTest, ErrorsByDiskOpAndStatusAsTheKernelNamesThem) {
  script_->sample.counts_errors = true;
  script_->sample.errors[{bpf::KernelDev(254, 0), "write", "I/O"}] = 3;
  script_->sample.errors[{bpf::KernelDev(254, 0), "read", "critical medium"}] = 2;
  script_->sample.errors[{bpf::KernelDev(7, 3), "read", "I/O"}] = 9;  // loop3: filtered out
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  ASSERT_TRUE(StatusOf(*snapshot)->success) << StatusOf(*snapshot)->error;
  const auto& errors = snapshot->block_io.errors;
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(std::tie(errors[0].device, errors[0].op, errors[0].error, errors[0].requests),
            std::make_tuple("vda", "read", "critical medium", 2u));
  EXPECT_EQ(std::tie(errors[1].device, errors[1].op, errors[1].error, errors[1].requests),
            std::make_tuple("vda", "write", "I/O", 3u));
  // The filtered disk's errors leave the map as its other counters do.
  EXPECT_EQ(script_->forgotten_disks, (std::vector<uint32_t>{bpf::KernelDev(7, 3)}));
}

TEST_F(BlockIoSourceTest, EachDiskGetsItsAlignmentUnit) {
  const auto queue = root_ / "sys/block/vda/queue";
  std::filesystem::create_directories(queue);
  std::ofstream(queue / "physical_block_size") << "4096\n";
  std::ofstream(queue / "optimal_io_size") << "0\n";
  {
    Sampler sampler(Options());
    Collect(sampler);
    EXPECT_EQ(script_->alignment, (std::map<uint32_t, uint32_t>{{bpf::KernelDev(254, 0), 4096}}));
  }
  std::ofstream(queue / "optimal_io_size") << "1048576\n";  // a RAID's full stripe
  Sampler sampler(Options());
  Collect(sampler);
  EXPECT_EQ(script_->alignment, (std::map<uint32_t, uint32_t>{{bpf::KernelDev(254, 0), 1048576}}));
}

TEST_F(BlockIoSourceTest, CgroupsAreNamedAndCountTheirDescendants) {
  const uint64_t fio = IdOf("system.slice/fio-load.service");
  const uint64_t sshd = IdOf("system.slice/sshd.service");
  AddCgroupIo(fio, bpf::BlockOp::kRead, 64 << 20, 1024);
  AddCgroupIo(sshd, bpf::BlockOp::kRead, 4096, 1);
  AddCgroupIo(IdOf("user.slice"), bpf::BlockOp::kWrite, 8192, 2);
  AddCgroupIo(IdOf(""), bpf::BlockOp::kWrite, 1 << 20, 3);  // the root: in no series
  Sampler sampler(Options());
  const auto snapshot = Collect(sampler);
  const BlockCgroupSeries* slice = Find(*snapshot, "system.slice", bpf::BlockOp::kRead);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->bytes, (64u << 20) + 4096);
  EXPECT_EQ(slice->requests, 1025u);
  EXPECT_EQ(slice->device, "vda");
  const BlockCgroupSeries* unit =
      Find(*snapshot, "system.slice/fio-load.service", bpf::BlockOp::kRead);
  ASSERT_NE(unit, nullptr);
  EXPECT_EQ(unit->unit, "fio-load.service");
  EXPECT_EQ(unit->bytes, 64u << 20);
  EXPECT_EQ(Find(*snapshot, "user.slice", bpf::BlockOp::kWrite)->requests, 2u);
  EXPECT_EQ(snapshot->block_io.cgroups.size(), 4u);
  EXPECT_EQ(snapshot->block_io.unresolved_bytes, 0u);
}

// On cgroup v2 the blkcg is the unified cgroup itself; unit names keep
// systemd's escapes, as the cgroup series spell them.
TEST_F(BlockIoSourceTest, CgroupsOfTheUnifiedHierarchyAreNamedTheSameWay) {
  UseTree("cgroup-v2", "sys/fs/cgroup");
  AddCgroupIo(IdOf("system.slice/system-getty.slice/getty\\x2dtty1.service"), bpf::BlockOp::kWrite,
              4096, 1, 8, 0);
  AddCgroupIo(IdOf("system.slice/postgresql.service"), bpf::BlockOp::kRead, 8192, 2, 8, 0);
  SamplerOptions options = Options();
  options.cgroups.max_depth = 3;
  Sampler sampler(std::move(options));
  const auto snapshot = Collect(sampler);
  const BlockCgroupSeries* getty = Find(
      *snapshot, "system.slice/system-getty.slice/getty\\x2dtty1.service", bpf::BlockOp::kWrite);
  ASSERT_NE(getty, nullptr);
  EXPECT_EQ(getty->unit, "getty\\x2dtty1.service");
  EXPECT_EQ(getty->device, "sda");
  EXPECT_EQ(Find(*snapshot, "system.slice/system-getty.slice", bpf::BlockOp::kWrite)->bytes, 4096u);
  EXPECT_EQ(Find(*snapshot, "system.slice", bpf::BlockOp::kRead)->bytes, 8192u);
}

TEST_F(BlockIoSourceTest, DepthFilterAndCapAsTheCgroupFileCollector) {
  AddCgroupIo(IdOf("system.slice/fio-load.service"), bpf::BlockOp::kRead, 4096, 1);
  AddCgroupIo(IdOf("user.slice"), bpf::BlockOp::kRead, 4096, 1);
  SamplerOptions options = Options();
  options.cgroups.max_depth = 1;
  options.cgroups.filter = *collectors::DeviceFilter::Create("", "user\\..*");
  Sampler sampler(std::move(options));
  auto snapshot = Collect(sampler);
  ASSERT_EQ(snapshot->block_io.cgroups.size(), 1u);
  EXPECT_EQ(snapshot->block_io.cgroups[0].cgroup, "system.slice");

  options = Options();
  options.cgroups.max_pairs = 2;  // system.slice, its fio unit; user.slice dropped
  sampler.Reconfigure(std::move(options));
  snapshot = Collect(sampler);
  EXPECT_EQ(snapshot->block_io.cgroups.size(), 2u);
  EXPECT_EQ(snapshot->block_io.cgroup_dropped_series, 1u);
}

TEST_F(BlockIoSourceTest, ARemovedCgroupsCountsStayWithItsParentAndLeaveTheMap) {
  const uint64_t fio = IdOf("system.slice/fio-load.service");
  AddCgroupIo(fio, bpf::BlockOp::kRead, 64 << 20, 1024);
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  ASSERT_NE(Find(*snapshot, "system.slice/fio-load.service", bpf::BlockOp::kRead), nullptr);
  std::filesystem::remove_all(root_ / "sys/fs/cgroup/blkio/system.slice/fio-load.service");
  for (uint64_t i = 0; i < BlockIoCgroups::kRescanSamples; ++i) snapshot = Collect(sampler);
  EXPECT_EQ(script_->forgotten, std::vector<uint64_t>{fio});
  EXPECT_EQ(Find(*snapshot, "system.slice/fio-load.service", bpf::BlockOp::kRead), nullptr);
  const BlockCgroupSeries* slice = Find(*snapshot, "system.slice", bpf::BlockOp::kRead);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->bytes, 64u << 20);
  // More I/O elsewhere under the slice adds to what the gone unit left.
  AddCgroupIo(IdOf("system.slice/sshd.service"), bpf::BlockOp::kRead, 4096, 1);
  snapshot = Collect(sampler);
  EXPECT_EQ(Find(*snapshot, "system.slice", bpf::BlockOp::kRead)->bytes, (64u << 20) + 4096);
}

TEST_F(BlockIoSourceTest, AProgramLoadedAgainCountsEveryCgroupFromZero) {
  const uint64_t fio = IdOf("system.slice/fio-load.service");
  AddCgroupIo(fio, bpf::BlockOp::kRead, 64 << 20, 1024);
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  std::filesystem::remove_all(root_ / "sys/fs/cgroup/blkio/system.slice/fio-load.service");
  for (uint64_t i = 0; i < BlockIoCgroups::kRescanSamples; ++i) snapshot = Collect(sampler);
  ASSERT_EQ(Find(*snapshot, "system.slice", bpf::BlockOp::kRead)->bytes, 64u << 20);
  // Disabled and enabled again (SIGHUP): the kernel's maps start empty.
  sampler.Reconfigure(Options(false));
  Collect(sampler);
  script_->sample = {};
  AddCgroupIo(IdOf("system.slice/sshd.service"), bpf::BlockOp::kRead, 4096, 1);
  sampler.Reconfigure(Options());
  snapshot = Collect(sampler);
  EXPECT_EQ(script_->loads, 2);
  // From 0 with the new program: not 64 MiB + 4 KiB (a counter that fell
  // from 64 MiB + more to 64 MiB + 4 KiB), not the retired 64 MiB again.
  const BlockCgroupSeries* slice = Find(*snapshot, "system.slice", bpf::BlockOp::kRead);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->bytes, 4096u);
}

TEST_F(BlockIoSourceTest, ACgroupGoneBeforeItWasNamedIsUnresolved) {
  AddCgroupIo(123456789, bpf::BlockOp::kWrite, 8192, 2);  // no directory has this inode
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  EXPECT_EQ(snapshot->block_io.unresolved_bytes, 8192u);
  EXPECT_EQ(snapshot->block_io.unresolved_requests, 2u);
  snapshot = Collect(sampler);  // unchanged: folded, forgotten, still counted
  EXPECT_EQ(script_->forgotten, std::vector<uint64_t>{123456789});
  EXPECT_EQ(snapshot->block_io.unresolved_bytes, 8192u);
}

// The device stage by size class, for the passive feed: per named disk and
// op, cumulative as the program counts it.
TEST_F(BlockIoSourceTest, TheDeviceStageBySizeClassPerNamedDiskAndOp) {
  script_->sample.device_classes[{254, 0, bpf::BlockOp::kWrite}][1] = {3, 1'500'000, 3 * 65536};
  script_->sample.device_classes[{254, 0, bpf::BlockOp::kRead}][0] = {5, 500'000, 5 * 4096};
  script_->sample.device_classes[{7, 3, bpf::BlockOp::kRead}][0] = {1, 1, 4096};  // filtered out
  Sampler sampler(Options());
  auto snapshot = Collect(sampler);
  ASSERT_TRUE(StatusOf(*snapshot)->success) << StatusOf(*snapshot)->error;
  const auto& classes = snapshot->block_io.device_classes;
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].device, "vda");
  EXPECT_EQ(classes[0].op, bpf::BlockOp::kRead);
  EXPECT_EQ(classes[0].classes[0], (bpf::SizeClassStats{5, 500'000, 5 * 4096}));
  EXPECT_EQ(classes[1].op, bpf::BlockOp::kWrite);
  EXPECT_EQ(classes[1].classes[1], (bpf::SizeClassStats{3, 1'500'000, 3 * 65536}));
  script_->sample.device_classes[{254, 0, bpf::BlockOp::kRead}][0] = {7, 700'000, 7 * 4096};
  snapshot = Collect(sampler);
  EXPECT_EQ(snapshot->block_io.device_classes[0].classes[0].count, 7u);  // cumulative
}

}  // namespace
}  // namespace iowatch::daemon
