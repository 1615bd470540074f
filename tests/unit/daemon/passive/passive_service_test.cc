#include "daemon/passive/passive_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace iowatch::daemon {
namespace {

// A sample at second `t` of sda (a disk), sda1 (its partition) and dm-0,
// each doing 100 reads of 0.5 ms a second.
Snapshot At(uint64_t t, const std::shared_ptr<const std::vector<collectors::BlockDevice>>& devs) {
  Snapshot s;
  s.timestamp_seconds = 1'000'000.0 + static_cast<double>(t);
  s.monotonic_seconds = 10.0 + static_cast<double>(t);
  for (const char* name : {"dm-0", "sda", "sda1"}) {
    DeviceSnapshot d;
    d.name = name;
    d.counters.reads = 100 * t;
    d.counters.read_sectors = 800 * t;
    d.counters.read_ms = 50 * t;
    d.counters.field_count = 17;
    s.devices.push_back(d);
  }
  s.block_devices = devs;
  return s;
}

std::shared_ptr<const std::vector<collectors::BlockDevice>> Devices() {
  auto devs = std::make_shared<std::vector<collectors::BlockDevice>>(3);
  (*devs)[0].name = "dm-0";
  (*devs)[1].name = "sda";
  (*devs)[2].name = "sda1";
  (*devs)[2].is_partition = true;
  (*devs)[2].parent = "sda";
  return devs;
}

// Whole disks are judged, partitions (their disk's I/O) and the excluded
// dm device not; a disk gone from the sample takes its series with it.
TEST(PassiveService, JudgesWholeDisksOutsideTheExclusion) {
  PassiveOptions options;
  options.exclude = *NamePattern::Compile(kPassiveDefaultExclude);
  PassiveService service(std::move(options));
  const auto devs = Devices();
  for (uint64_t t = 0; t <= 80; ++t) service.OnSample(At(t, devs), {});
  const std::shared_ptr<const PassiveSnapshot> latest = service.Latest();
  ASSERT_EQ(latest->series.size(), 1u);  // sda's reads; it writes nothing
  const PassiveSeriesRow& read = latest->series[0];
  EXPECT_EQ(read.device, "sda");
  EXPECT_EQ(read.op, "read");
  EXPECT_EQ(read.last.window.requests, 6000u);
  EXPECT_EQ(read.last.reason, probes::PassiveReason::kLearning);
  EXPECT_EQ(read.windows[static_cast<size_t>(probes::PassiveReason::kLearning)], 2u);

  // sda gone: its series go at the next window.
  Snapshot gone = At(140, devs);
  std::erase_if(gone.devices, [](const DeviceSnapshot& d) { return d.name == "sda"; });
  service.OnSample(gone, {});
  EXPECT_TRUE(service.Latest()->series.empty());
}

// Another disk under the same name (a new diskseq: replaced, or removed
// and added) starts afresh: the old disk's series and model are not its.
TEST(PassiveService, ADiskReplacedUnderTheSameNameStartsAfresh) {
  PassiveService service(PassiveOptions{});
  auto devs = std::make_shared<std::vector<collectors::BlockDevice>>(*Devices());
  (*devs)[1].diskseq = 7;
  for (uint64_t t = 0; t <= 80; ++t) service.OnSample(At(t, devs), {});
  const auto sda_learning = [&] {
    for (const PassiveSeriesRow& row : service.Latest()->series) {
      if (row.device == "sda")
        return row.windows[static_cast<size_t>(probes::PassiveReason::kLearning)];
    }
    return uint64_t{0};
  };
  EXPECT_EQ(sda_learning(), 2u);
  auto replaced = std::make_shared<std::vector<collectors::BlockDevice>>(*devs);
  (*replaced)[1].diskseq = 8;
  for (uint64_t t = 81; t <= 140; ++t) service.OnSample(At(t, replaced), {});
  EXPECT_EQ(sda_learning(), 1u) << "the old disk's minutes were kept";
}

// A probe's disk, named by the daemon, leaves the minute unjudged.
TEST(PassiveService, AProbedDisksMinuteIsCountedAsSuch) {
  PassiveService service(PassiveOptions{});
  const auto devs = Devices();
  const std::vector<std::string> probing = {"sda"};
  for (uint64_t t = 0; t <= 20; ++t)
    service.OnSample(At(t, devs), t == 5 ? probing : std::vector<std::string>{});
  for (const PassiveSeriesRow& row : service.Latest()->series) {
    const size_t probe = row.windows[static_cast<size_t>(probes::PassiveReason::kProbe)];
    EXPECT_EQ(probe, row.device == "sda" ? 1u : 0u) << row.device << " " << row.op;
  }
}

}  // namespace
}  // namespace iowatch::daemon
