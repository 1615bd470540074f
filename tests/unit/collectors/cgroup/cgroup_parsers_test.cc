// The cgroup parsers on the layouts the kernel prints: mountinfo of a hybrid
// host (this machine: v1 blkio and a v2 mount without controllers) and of a
// v2-only host; v2 io.stat with io.cost keys and a vanished device; v1
// blkio.throttle files; malformed lines name file, line and the layout
// expected; unit names with systemd's escapes.
#include <gtest/gtest.h>

#include "collectors/cgroup/cgroup_io_stat.h"
#include "collectors/cgroup/cgroup_mounts.h"
#include "collectors/cgroup/cgroup_names.h"

namespace iowatch::collectors {
namespace {

TEST(ParseCgroupMounts, AHybridHostHasV1BlkioAndAUnifiedMount) {
  const auto m = ParseCgroupMounts(
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime shared:15 - cgroup cgroup rw,blkio\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
      "mountinfo");
  ASSERT_TRUE(m) << m.error().ToString();
  EXPECT_EQ(m->blkio, "/sys/fs/cgroup/blkio");
  EXPECT_EQ(m->unified, "/sys/fs/cgroup/unified");
}

TEST(ParseCgroupMounts, AV2OnlyHostAndEscapedMountPoints) {
  const auto m = ParseCgroupMounts(
      "25 21 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
      "rw,nsdelegate,memory_recursiveprot\n"
      "90 25 0:40 / /mnt/my\\040cgroups rw - cgroup cgroup rw,blkio,cpu\n",
      "mountinfo");
  ASSERT_TRUE(m) << m.error().ToString();
  EXPECT_EQ(m->unified, "/sys/fs/cgroup");
  EXPECT_EQ(m->blkio, "/mnt/my cgroups");
  EXPECT_FALSE(RelativeToSysfs(*m->blkio));
  EXPECT_EQ(RelativeToSysfs(*m->unified), "fs/cgroup");
}

TEST(ParseCgroupMounts, ALineWithoutTheSeparatorNamesFileAndLine) {
  const auto m = ParseCgroupMounts(
      "25 21 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n31 23 0:28 / /x rw tmpfs\n",
      "/proc/self/mountinfo");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().ToString().find("/proc/self/mountinfo:2: expected 'ID PARENT"),
            std::string::npos)
      << m.error().ToString();
}

TEST(ParseIoStat, DevicesInFileOrderIgnoringKeysOfIoCost) {
  const auto io = ParseIoStat(
      "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=4096 dios=1\n"
      "253:0 rbytes=0 wbytes=8192 rios=0 wios=2 dbytes=0 dios=0 cost.vrate=100.00 "
      "cost.usage=12 cost.wait=3 cost.indebt=0 cost.indelay=1 depth=max avg_lat=250 win=100\n",
      "io.stat");
  ASSERT_TRUE(io) << io.error().ToString();
  ASSERT_EQ(io->size(), 2u);
  EXPECT_EQ((*io)[0], (CgroupDeviceIo{8, 16, 1459200, 314773504, 192, 353, 4096, 1, {}}));
  EXPECT_EQ((*io)[1].major, 253u);
  EXPECT_EQ((*io)[1].write_bytes, 8192u);
  EXPECT_EQ((*io)[1].controllers, (CgroupIoControllers{12, 3, 0, 1, 250}));
  EXPECT_EQ((*io)[0].controllers, CgroupIoControllers{});  // no controller: nothing
  EXPECT_TRUE(ParseIoStat("", "io.stat")->empty());        // a cgroup that did no I/O
}

TEST(ParseIoStat, MalformedLinesNameFileLineAndLayout) {
  for (const char* text : {"8:16 rbytes=x wbytes=0\n", "sda rbytes=1\n", "8 rbytes=1\n"}) {
    const auto io = ParseIoStat(text, "/sys/fs/cgroup/a.service/io.stat");
    ASSERT_FALSE(io) << text;
    EXPECT_NE(io.error().ToString().find("/sys/fs/cgroup/a.service/io.stat:1: expected 'MAJ:MIN "
                                         "rbytes=N"),
              std::string::npos)
        << io.error().ToString();
  }
}

TEST(ParseBlkioThrottle, BytesAndRequestsPerDeviceWithoutTheSums) {
  const auto io = ParseBlkioThrottle(
      "254:0 Read 88728399872\n254:0 Write 17551343616\n254:0 Sync 106312921088\n"
      "254:0 Async 390918144\n254:0 Discard 424095744\n254:0 Total 106703839232\n"
      "7:0 Read 4096\n7:0 Write 0\n7:0 Total 4096\nTotal 106703843328\n",
      "blkio.throttle.io_service_bytes",
      "254:0 Read 1703810\n254:0 Write 657922\n254:0 Sync 2361161\n254:0 Async 1140\n"
      "254:0 Discard 569\n254:0 Total 2362301\nTotal 2362301\n",
      "blkio.throttle.io_serviced");
  ASSERT_TRUE(io) << io.error().ToString();
  ASSERT_EQ(io->size(), 2u);
  EXPECT_EQ((*io)[0], (CgroupDeviceIo{
                          254, 0, 88728399872, 17551343616, 1703810, 657922, 424095744, 569, {}}));
  EXPECT_EQ((*io)[1], (CgroupDeviceIo{7, 0, 4096, 0, 0, 0, 0, 0, {}}));
  // A child without a throttle rule: "Total 0" only.
  const auto idle = ParseBlkioThrottle("Total 0\n", "b", "Total 0\n", "s");
  ASSERT_TRUE(idle);
  EXPECT_TRUE(idle->empty());
  const auto bad = ParseBlkioThrottle("254:0 Read\n", "blkio.throttle.io_service_bytes", "", "s");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().ToString().find("blkio.throttle.io_service_bytes:1: expected"),
            std::string::npos);
}

TEST(UnitOf, TheLastComponentWhenItNamesAUnitEscapesKept) {
  EXPECT_EQ(UnitOf("system.slice/postgresql.service"), "postgresql.service");
  EXPECT_EQ(UnitOf("system.slice/system-getty.slice/getty\\x2dtty1.service"),
            "getty\\x2dtty1.service");
  EXPECT_EQ(UnitOf("user.slice/user-1000.slice"), "user-1000.slice");
  EXPECT_EQ(UnitOf("docker/4f1e2a"), "");
  EXPECT_EQ(UnitOf(""), "");
  EXPECT_EQ(UnitOf(".service"), "");
  EXPECT_EQ(CgroupDepth(""), 0u);
  EXPECT_EQ(CgroupDepth("system.slice"), 1u);
  EXPECT_EQ(CgroupDepth("system.slice/a.service"), 2u);
}

}  // namespace
}  // namespace iowatch::collectors
