// `iowatch health` run whole (RunHealth) on fixture trees with md arrays: a
// degraded array, a failed member and an inactive array are problems (exit
// 1) with their state, members and sync printed; a healthy array is not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/health/health_command.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

struct MdHealthRan {
  int status = 0;
  std::string out;
};

MdHealthRan HealthOn(const std::string& root, const std::string& state_dir,
                     std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--no-smart", "--state.dir", state_dir};
  args.insert(args.end(), more.begin(), more.end());
  ::testing::internal::CaptureStdout();
  MdHealthRan ran;
  ran.status = RunHealth(GlobalOptions{root + "/proc", root + "/sys"}, args);
  ran.out = ::testing::internal::GetCapturedStdout();
  return ran;
}

void WriteMdFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(HealthMd, ADegradedArrayWithAFailedMemberFailsWithItsStory) {
  iowatch::testing::TempDir state;
  ASSERT_TRUE(state.ok());
  // node_exporter's mdstat: md6 (raid1) recovers with sdb2 failed; md4 is inactive.
  const MdHealthRan ran =
      HealthOn(iowatch::testing::FixturesDir() + "/node-exporter", state.path().string());
  EXPECT_EQ(ran.status, 1) << ran.out;
  for (const char* line : {
           "md6  200.0 GB  md\n",
           "  md array     raid1, active, degraded: 1 of 2 raid disks missing or failed\n",
           "  members      sdb2 (failed), sdc (spare), sda2\n",
           "  sync         recovery 8.6 % done, 17 min left at 253.7 MiB/s\n",
           "  PROBLEM      degraded: 1 of 2 raid disks missing or failed\n",
           "  PROBLEM      member(s) marked failed (F): sdb2\n",
           "  PROBLEM      inactive: the kernel does not run it, nothing on it can be read\n",
           "  sync         resync=DELAYED\n",
       }) {
    EXPECT_NE(ran.out.find(line), std::string::npos) << line << "\n" << ran.out;
  }
}

TEST(HealthMd, TheJsonCarriesTheArrayAndItsSync) {
  iowatch::testing::TempDir state;
  ASSERT_TRUE(state.ok());
  const MdHealthRan ran = HealthOn(iowatch::testing::FixturesDir() + "/node-exporter",
                                   state.path().string(), {"-d", "md6", "-o", "JSON"});
  EXPECT_EQ(ran.status, 1) << ran.out;
  const auto doc = nlohmann::json::parse(ran.out);
  ASSERT_EQ(doc["disks"].size(), 1u) << ran.out;
  const auto& md = doc["disks"][0]["md"];
  EXPECT_EQ(md["level"], "raid1");
  EXPECT_EQ(md["degraded"], 1);
  EXPECT_EQ(md["raid_disks"], 2);
  EXPECT_EQ(md["failed"], nlohmann::json::array({"sdb2"}));
  EXPECT_EQ(md["sync"]["action"], "recovery");
  EXPECT_DOUBLE_EQ(md["sync"]["remaining_seconds"].get<double>(), 1020);
  EXPECT_EQ(doc["problems"], 2);
}

TEST(HealthMd, AHealthyArrayIsNoProblem) {
  iowatch::testing::TempDir tree;
  iowatch::testing::TempDir state;
  ASSERT_TRUE(tree.ok() && state.ok());
  WriteMdFile(tree.path() / "proc/mdstat",
              "Personalities : [raid1]\n"
              "md0 : active raid1 sdb1[1] sda1[0]\n"
              "      1048512 blocks super 1.2 [2/2] [UU]\n\n"
              "unused devices: <none>\n");
  WriteMdFile(tree.path() / "proc/diskstats", "");
  const std::filesystem::path md = tree.path() / "sys/block/md0/md";
  for (const auto& [name, value] : {std::pair{"level", "raid1"},
                                    {"array_state", "clean"},
                                    {"degraded", "0"},
                                    {"raid_disks", "2"},
                                    {"sync_action", "idle"},
                                    {"sync_completed", "none"}}) {
    WriteMdFile(md / name, std::string(value) + "\n");
  }
  const MdHealthRan ran = HealthOn(tree.path().string(), state.path().string());
  EXPECT_EQ(ran.status, 0) << ran.out;
  for (const char* line : {"  md array     raid1, active (clean), 2 of 2 raid disks\n",
                           "  members      sdb1, sda1\n", "  problems     none\n"}) {
    EXPECT_NE(ran.out.find(line), std::string::npos) << line << "\n" << ran.out;
  }
  EXPECT_EQ(ran.out.find("PROBLEM"), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find("  sync "), std::string::npos) << ran.out;
}

}  // namespace
}  // namespace iowatch::daemon
