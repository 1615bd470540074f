// The mount table parsed as proc(5) lays it out, and the filesystem
// collector's selection from it: node_exporter's default exclusions, one
// mount per filesystem (device number), and mounts hidden under others.
#include "collectors/filesystem/filesystem_mounts.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectors/filesystem/mountinfo.h"

namespace iowatch::collectors {
namespace {

TEST(Mountinfo, ReadsEveryFieldAndUnescapesPaths) {
  const Mountinfo table = ParseMountinfo(
      "36 35 98:0 /mnt1 /mnt\\0402 rw,noatime master:1 shared:2 - ext3 /dev/root "
      "rw,errors=continue\n"
      "37 36 0:41 / /srv\\011tab ro - fuse.sshfs me@host:/x rw,user_id=0\n",
      "/proc/self/mountinfo");
  ASSERT_TRUE(table.skipped.empty());
  ASSERT_EQ(table.mounts.size(), 2u);
  const Mount& m = table.mounts[0];
  EXPECT_EQ(m.id, 36u);
  EXPECT_EQ(m.parent_id, 35u);
  EXPECT_EQ(m.major, 98u);
  EXPECT_EQ(m.minor, 0u);
  EXPECT_EQ(m.root, "/mnt1");
  EXPECT_EQ(m.mount_point, "/mnt 2");
  EXPECT_EQ(m.mount_options, "rw,noatime");
  EXPECT_EQ(m.fstype, "ext3");
  EXPECT_EQ(m.source, "/dev/root");
  EXPECT_EQ(m.super_options, "rw,errors=continue");
  EXPECT_EQ(table.mounts[1].mount_point, "/srv\ttab");
  EXPECT_EQ(table.mounts[1].fstype, "fuse.sshfs");
}

TEST(Mountinfo, AMalformedLineIsSkippedNamingFileLineAndLayout) {
  const Mountinfo table = ParseMountinfo(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "22 21 8:x / /data rw - ext4 /dev/sdb1 rw\n"  // device number not numeric
      "23 21 8:3 / /nodash rw ext4 /dev/sdc1 rw\n"  // no separator
      "24 21 8:4 / /short rw - ext4\n"              // fields missing after the separator
      "25 21 8:5 / /ok rw shared:9 - xfs /dev/sdd1 rw\n",
      "/proc/self/mountinfo");
  ASSERT_EQ(table.mounts.size(), 2u);
  EXPECT_EQ(table.mounts[1].mount_point, "/ok");
  ASSERT_EQ(table.skipped.size(), 3u);
  const std::string first = table.skipped[0].ToString();
  EXPECT_NE(first.find("/proc/self/mountinfo:2"), std::string::npos) << first;
  EXPECT_NE(first.find("MAJOR:MINOR"), std::string::npos) << first;
  EXPECT_NE(table.skipped[1].ToString().find(":3"), std::string::npos);
  EXPECT_NE(table.skipped[2].ToString().find(":4"), std::string::npos);
}

TEST(Mountinfo, OptionsMatchWholeWords) {
  EXPECT_TRUE(HasMountOption("rw,ro", "ro"));
  EXPECT_TRUE(HasMountOption("ro", "ro"));
  EXPECT_FALSE(HasMountOption("rw,errors=remount-ro", "ro"));
  EXPECT_FALSE(HasMountOption("", "ro"));
}

std::vector<Mount> Table(std::string_view text) {
  Mountinfo table = ParseMountinfo(text, "mountinfo");
  EXPECT_TRUE(table.skipped.empty());
  return table.mounts;
}

std::vector<std::string> MountPoints(const std::vector<FilesystemMount>& selected) {
  std::vector<std::string> out;
  for (const FilesystemMount& f : selected) {
    out.push_back(f.mount.mount_point + (f.reachable ? "" : " (hidden)"));
  }
  return out;
}

TEST(SelectFilesystems, LeavesOutNodeExportersPseudoFilesystemsAndPaths) {
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "22 21 0:21 / /proc rw - proc proc rw\n"
      "23 21 0:22 / /sys rw - sysfs sysfs rw\n"
      "24 21 0:5 / /dev rw - devtmpfs udev rw\n"
      "25 24 0:23 / /dev/shm rw - tmpfs tmpfs rw\n"
      "26 21 0:24 / /run rw - tmpfs tmpfs rw\n"
      "27 26 0:25 / /run/credentials/x.service ro - tmpfs tmpfs ro\n"
      "28 21 0:26 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw\n"
      "29 21 0:27 / /snap/core/1 ro - squashfs /dev/loop0 ro\n"
      "30 21 8:17 / /data rw - xfs /dev/sdb1 rw\n");
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/run", "/data"}));
}

TEST(SelectFilesystems, IncludePatternsKeepOnlyWhatTheyMatch) {
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "26 21 0:24 / /run rw - tmpfs tmpfs rw\n"
      "30 21 8:17 / /data rw - xfs /dev/sdb1 rw\n");
  auto filter = MakeFilesystemFilter("^(ext4|xfs)$", "", "^/data$", "");
  ASSERT_TRUE(filter.has_value());
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, *filter)), (std::vector<std::string>{"/data"}));
  EXPECT_FALSE(MakeFilesystemFilter("", "(", "", "").has_value());  // the error, not a crash
}

TEST(SelectFilesystems, OneMountPerFilesystemTheWholeOneFirst) {
  // A bind of a subtree mounted before the whole filesystem, a second mount
  // of the root filesystem: one series each, at the mount of the whole.
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "22 21 253:0 /export /srv/export rw - xfs /dev/mapper/vg0-data rw\n"
      "23 21 253:0 / /var/lib/data rw - xfs /dev/mapper/vg0-data rw\n"
      "24 21 8:1 / /mnt/again ro - ext4 /dev/sda1 rw\n"
      "25 21 253:0 /export /srv/other rw - xfs /dev/mapper/vg0-data rw\n");
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/var/lib/data"}));
}

TEST(SelectFilesystems, AMountCoveredByAnotherIsHiddenAndSoAreTheMountsUnderIt) {
  // systemd's ProtectHome=yes: an empty mount over /home, inside the service.
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "24 21 0:24 / /run rw - tmpfs tmpfs rw\n"
      "29 21 8:2 / /home rw - ext4 /dev/sda2 rw\n"
      "31 29 8:3 / /home/big rw - xfs /dev/sda3 rw\n"
      "30 29 0:24 /systemd/inaccessible/dir /home ro - tmpfs tmpfs rw\n");
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/run", "/home (hidden)", "/home/big (hidden)"}));
}

TEST(SelectFilesystems, AReachableMountOfAHiddenFilesystemIsTheOneKept) {
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "29 21 8:2 / /home rw - ext4 /dev/sda2 rw\n"
      "30 29 0:24 / /home ro - tmpfs tmpfs rw\n"
      "32 21 8:2 / /mnt/home rw - ext4 /dev/sda2 rw\n");
  const auto selected = SelectFilesystems(mounts, DefaultFilesystemFilter());
  EXPECT_EQ(MountPoints(selected),
            (std::vector<std::string>{"/", "/mnt/home", "/home"}));  // tmpfs 0:24 at /home
}

TEST(SelectFilesystems, AMountUnderAnOverMountedParentDirectoryIsHidden) {
  // /dev/sdb1 on /data/x, then a tmpfs on /data: both children of /, and a
  // lookup of /data/x now ends in the tmpfs (statfs would fail, or answer
  // with the tmpfs's figures under sdb1's labels).
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "30 21 8:17 / /data/x rw - xfs /dev/sdb1 rw\n"
      "31 21 0:40 / /data rw - tmpfs tmpfs rw\n"
      "32 21 8:33 / /database rw - xfs /dev/sdc1 rw\n");  // a name that only starts alike
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/data/x (hidden)", "/data", "/database"}));
}

TEST(SelectFilesystems, ReachabilityFollowsTheMountTreeNotTheTablesOrder) {
  // After `mount --move` a mount can be listed before its parent: /srv/a/b
  // (31) sits on /srv/a (30), which a tmpfs (32) covers, so it is hidden
  // wherever the table lists it (as /srv/a is); /srv/c (33) is listed before
  // its parent, which is reachable, and is reachable too.
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "31 30 8:3 / /srv/a/b rw - xfs /dev/sda3 rw\n"
      "33 34 8:5 / /srv/c rw - xfs /dev/sda5 rw\n"
      "30 34 8:2 / /srv/a rw - ext4 /dev/sda2 rw\n"
      "32 30 0:41 / /srv/a rw - tmpfs tmpfs rw\n"
      "34 21 8:4 / /srv rw - ext4 /dev/sda4 rw\n");
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/srv/a/b (hidden)", "/srv/c", "/srv/a (hidden)",
                                      "/srv/a", "/srv"}));
}

TEST(SelectFilesystems, ARootThatNamesItselfItsParentIsReachable) {
  const auto mounts = Table(
      "21 21 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "22 21 8:17 / /data rw - xfs /dev/sdb1 rw\n");
  EXPECT_EQ(MountPoints(SelectFilesystems(mounts, DefaultFilesystemFilter())),
            (std::vector<std::string>{"/", "/data"}));
}

TEST(SelectFilesystems, AStackOfThousandsOfMountsOnOnePointOnlyTheTopIsReachable) {
  std::string text = "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
  constexpr uint32_t kStack = 20000;  // deep enough to overflow a recursive walk's stack
  for (uint32_t i = 0; i < kStack; ++i) {
    text += fmt::format("{} {} 0:{} / /stack rw - tmpfs t{} rw\n", 100 + i, i == 0 ? 21 : 99 + i,
                        100 + i, i);
  }
  const auto selected = SelectFilesystems(Table(text), DefaultFilesystemFilter());
  ASSERT_EQ(selected.size(), kStack + 1);
  for (uint32_t i = 0; i < kStack; ++i) {
    EXPECT_EQ(selected[i + 1].reachable, i + 1 == kStack) << "mount " << i;
  }
}

TEST(SelectFilesystems, TwoFilesystemsStackedUnderOneLabelSetAreOneSeriesTheTopOne) {
  // Two tmpfs mounted on /scratch, one over the other: two device numbers,
  // one (device, fstype, mountpoint); only the top one is what /scratch shows.
  const auto mounts = Table(
      "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "40 21 0:50 / /scratch rw - tmpfs tmpfs rw,size=1024k\n"
      "41 40 0:51 / /scratch rw - tmpfs tmpfs rw,size=2048k\n");
  const auto selected = SelectFilesystems(mounts, DefaultFilesystemFilter());
  ASSERT_EQ(MountPoints(selected), (std::vector<std::string>{"/", "/scratch"}));
  EXPECT_EQ(selected[1].mount.id, 41u);
  EXPECT_TRUE(selected[1].reachable);
}

TEST(MountLabel, PathsThatDifferOnlyInInvalidBytesStayDistinct) {
  EXPECT_EQ(MountLabel("/m/x\xff"), "/m/x\\377");
  EXPECT_EQ(MountLabel("/m/x\xfe"), "/m/x\\376");
  EXPECT_EQ(MountLabel("/srv/caf\xc3\xa9 dir"), "/srv/caf\xc3\xa9 dir");  // valid UTF-8 kept
  // The backslash is escaped too, so that a path spelling "\377" is not the byte.
  EXPECT_EQ(MountLabel("/m/x\\377"), "/m/x\\134377");
  EXPECT_EQ(MountLabel("/m/\xc3"), "/m/\\303");  // a sequence cut short
}

}  // namespace
}  // namespace iowatch::collectors
