// The storage stack's health from a snapshot: every NVMe state the kernel
// prints but live is a problem, a controller without a state file is not
// judged; every ZFS state but ONLINE is a problem; a multipath path in any
// state but running (unknown included, as IowatchMultipathPathDown) is a
// problem, no running path one more, one running path left a warning; and
// BuildHostHealth puts each on its story.
#include "daemon/sampling/storage_stack_health.h"

#include <gtest/gtest.h>

#include <memory>

#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {
namespace {

TEST(StorageStackHealth, EveryNvmeStateButLiveIsAProblem) {
  Snapshot s;
  for (const std::string_view state : collectors::kNvmeControllerStates) {
    s.nvme.controllers.push_back(
        {.name = "nvme" + std::string(state), .state = std::string(state)});
  }
  s.nvme.controllers.push_back({.name = "nvme9", .state = "unknown state"});
  s.nvme.controllers.push_back({.name = "nvme10"});  // no state file
  const std::vector<NvmeControllerHealth> controllers = BuildNvmeHealth(s);
  ASSERT_EQ(controllers.size(), std::size(collectors::kNvmeControllerStates) + 2);
  for (const NvmeControllerHealth& c : controllers) {
    const bool judged_ok = c.state == "live" || c.state.empty();
    EXPECT_EQ(c.problems.empty(), judged_ok) << c.name << " " << c.state;
  }
  EXPECT_EQ(DescribeNvmeController(controllers.back()), "model unknown, state unknown");
}

TEST(StorageStackHealth, EveryZfsStateButOnlineIsAProblem) {
  Snapshot s;
  for (const char* state :
       {"ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "REMOVED", "UNAVAIL", "SUSPENDED"}) {
    s.zfs.pools.push_back({.name = state, .state = state});
  }
  s.zfs.pools.push_back({.name = "nostate"});
  for (const ZfsPoolHealth& p : BuildZfsHealth(s)) {
    EXPECT_EQ(p.problems.empty(), p.state == "ONLINE" || p.state.empty()) << p.name;
  }
}

TEST(StorageStackHealth, MultipathPathsNotRunningAndTheLastOneLeft) {
  Snapshot s;
  s.udev.multipath = {{"dm-0", "two", {{"sda", "running"}, {"sdb", "running"}}},
                      {"dm-1", "one", {{"sdc", "running"}, {"sdd", "blocked"}}},
                      {"dm-2", "none", {{"sde", "offline"}, {"sdf", "unknown"}}}};
  const std::vector<MultipathHealth> maps = BuildMultipathHealth(s);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_TRUE(maps[0].problems.empty());
  EXPECT_TRUE(maps[0].warnings.empty());
  EXPECT_EQ(maps[1].usable, 1u);
  EXPECT_EQ(maps[1].problems,
            std::vector<std::string>{"multipath one: path sdd blocked: it carries no I/O"});
  EXPECT_EQ(maps[1].warnings.size(), 1u);
  EXPECT_EQ(maps[2].usable, 0u);
  EXPECT_EQ(maps[2].problems.size(), 3u);  // two paths, and none left
  EXPECT_TRUE(maps[2].warnings.empty());
  EXPECT_EQ(DescribeMultipath(maps[1]), "1 of 2 path(s) usable: sdc running, sdd blocked");
}

TEST(StorageStackHealth, HostHealthTellsEachOnItsStory) {
  Snapshot s;
  auto devices = std::make_shared<std::vector<collectors::BlockDevice>>();
  collectors::BlockDevice nvme;
  nvme.name = "nvme0n1";
  nvme.transport = "nvme";
  collectors::BlockDevice dm;
  dm.name = "dm-0";
  dm.transport = "dm";
  devices->push_back(nvme);
  devices->push_back(dm);
  s.block_devices = devices;
  s.nvme.controllers = {
      {.name = "nvme0", .state = "resetting", .namespaces = {{.name = "nvme0n1"}}},
      {.name = "nvme1", .state = "dead"}};
  s.udev.multipath = {{"dm-0", "mpatha", {{"sda", "offline"}, {"sdb", "running"}}}};
  s.zfs.pools = {{.name = "tank", .state = "DEGRADED"}};
  const HostHealth health = BuildHostHealth(s, {}, {}, "", false);
  ASSERT_EQ(health.disks.size(), 3u);
  EXPECT_EQ(health.disks[0].name, "nvme0n1");
  ASSERT_TRUE(health.disks[0].nvme);
  EXPECT_EQ(health.disks[0].problems.size(), 1u);
  EXPECT_EQ(health.disks[1].name, "dm-0");
  ASSERT_TRUE(health.disks[1].multipath);
  EXPECT_EQ(health.disks[1].problems.size(), 1u);
  EXPECT_EQ(health.disks[2].name, "nvme1");  // no namespace sampled: a story of its own
  EXPECT_EQ(health.disks[2].transport, "nvme");
  ASSERT_EQ(health.zfs_pools.size(), 1u);
  EXPECT_EQ(health.Problems(), 4u);

  const HostHealth one = BuildHostHealth(s, {}, {}, "tank", false);
  EXPECT_TRUE(one.disks.empty());
  EXPECT_EQ(one.Problems(), 1u);
}

}  // namespace
}  // namespace iowatch::daemon
