#include "daemon/sampling/snapshot_advice.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace iowatch::daemon {
namespace {

// md0: RAID-5 of four disks, 512 KiB chunks: a 1536 KiB full stripe. diskstats
// says its writes average 2 MiB (no small writes by the average).
Snapshot Array() {
  Snapshot s;
  collectors::BlockDevice md;
  md.name = "md0";
  md.md = collectors::MdGeometry{"raid5", 512 * 1024, 4, 2};
  md.queue.physical_block_size = 4096;
  md.queue.max_sectors_kb = 4096;
  md.queue.max_hw_sectors_kb = 4096;
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(
      std::vector<collectors::BlockDevice>{md});
  DeviceSnapshot counters;
  counters.name = "md0";
  counters.counters.writes = 1000;
  counters.counters.write_sectors = 1000 * 4096;
  s.devices.push_back(counters);
  return s;
}

const advice::AdviceFinding* SmallWrites(const std::vector<advice::AdviceFinding>& f) {
  const auto it =
      std::ranges::find(f, "small_writes_on_parity_raid", &advice::AdviceFinding::finding);
  return it == f.end() ? nullptr : &*it;
}

TEST(SnapshotAdvice, DiskstatsAveragesWithoutTheBpfCollector) {
  const Snapshot s = Array();
  EXPECT_EQ(SmallWrites(SnapshotAdvice(s)), nullptr);  // 2 MiB on average: not small
}

// The same disk with the BPF collector on: 800 of its 1000 writes were 64 KiB
// or less (and some 16 MiB ones made the average), 300 not aligned.
TEST(SnapshotAdvice, BpfHistogramsWhenTheCollectorIsOn) {
  Snapshot s = Array();
  BlockRequestSeries writes;
  writes.device = "md0";
  writes.op = collectors::bpf::BlockOp::kWrite;
  writes.stats.requests = 1000;
  writes.stats.bytes = 800 * 65536 + 200ULL * (16 << 20);
  writes.stats.size_slots[collectors::bpf::SizeSlotOf(65536)] = 800;
  writes.stats.size_slots[collectors::bpf::SizeSlotOf(16 << 20)] = 200;
  writes.stats.aligned = 700;
  writes.stats.unaligned = 300;
  s.block_io.requests.push_back(writes);
  const auto& findings = SnapshotAdvice(s);
  const advice::AdviceFinding* f = SmallWrites(findings);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->text.find("80 % of 1000 writes are smaller than the full stripe, 1536 KiB (BPF "
                         "histograms since the collector was loaded); 30 % are not aligned to it"),
            std::string::npos)
      << f->text;
  EXPECT_EQ(&SnapshotAdvice(s), &findings);  // computed once per snapshot
}

}  // namespace
}  // namespace iowatch::daemon
