// NameForeignLoad: the deepest cgroups that loaded the disk, by their peak
// over the window, never iowatch's own; and OwnCgroup from /proc/self/cgroup.
#include "daemon/sampling/foreign_load.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collectors/cgroup/cgroup_io.h"

namespace iowatch::daemon {
namespace {

CgroupSeries Pair(std::string cgroup, std::string unit, std::string device, double read_peak) {
  return {std::move(cgroup),   std::move(unit), std::move(device), {}, true, {},
          {read_peak, 0, 0, 0}};
}

Snapshot Loaded() {
  Snapshot s;
  s.window_seconds = 60;
  collectors::BlockDevice vda;
  vda.name = "vda";
  vda.major = 254;
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(
      std::vector<collectors::BlockDevice>{vda});
  s.cgroups.series = {
      Pair("system.slice", "system.slice", "vda", 130e6),
      Pair("system.slice/backup.service", "backup.service", "vda", 3.1e6),
      Pair("system.slice/iowatch.service", "iowatch.service", "vda", 500e6),
      Pair("system.slice/postgresql.service", "postgresql.service", "vda", 96e6),
      Pair("user.slice", "user.slice", "vda", 0),
      Pair("docker/4f1e", "", "vda", 1e6),
      Pair("system.slice/other.service", "other.service", "sdb", 900e6),
  };
  return s;
}

TEST(NameForeignLoad, TheDeepestCgroupsByPeakNeverIowatchItself) {
  EXPECT_EQ(NameForeignLoad(Loaded(), 254, 0, "system.slice/iowatch.service"),
            "in the last 60 s: postgresql.service up to 96.0 MB/s, backup.service up to 3.1 MB/s, "
            "docker/4f1e up to 1.0 MB/s");
  EXPECT_EQ(NameForeignLoad(Loaded(), 254, 0, "system.slice/iowatch.service", 1),
            "in the last 60 s: postgresql.service up to 96.0 MB/s");
  EXPECT_EQ(NameForeignLoad(Loaded(), 8, 16, ""), "");  // no such disk in the sample
  Snapshot quiet = Loaded();
  quiet.cgroups.series.clear();
  EXPECT_EQ(NameForeignLoad(quiet, 254, 0, ""), "");
}

TEST(OwnCgroup, TheBlkioLineOnV1AndTheUnifiedLineOnV2) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "iowatch-own-cgroup";
  std::filesystem::create_directories(dir / "self");
  std::ofstream(dir / "self/cgroup") << "9:name=systemd:/system.slice/iowatch.service\n"
                                        "7:blkio,io:/system.slice/iowatch.service\n"
                                        "3:cpu,cpuacct:/\n"
                                        "0::/system.slice/iowatch.service\n";
  const FileTree procfs(dir);
  EXPECT_EQ(collectors::OwnCgroup(procfs, collectors::CgroupVersion::kV1),
            "system.slice/iowatch.service");
  EXPECT_EQ(collectors::OwnCgroup(procfs, collectors::CgroupVersion::kV2),
            "system.slice/iowatch.service");
  std::ofstream(dir / "self/cgroup") << "7:blkio:/\n";
  EXPECT_EQ(collectors::OwnCgroup(procfs, collectors::CgroupVersion::kV1), "");
  EXPECT_EQ(collectors::OwnCgroup(FileTree("/nonexistent"), collectors::CgroupVersion::kV2), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace iowatch::daemon
