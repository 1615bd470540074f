// The filesystems' own error counters read from a sysfs tree: ext4's three
// files, btrfs's error_stats per device found through the member device, and
// a malformed file named with its path and line.
#include "collectors/filesystem/filesystem_errors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace iowatch::collectors {
namespace {

class FilesystemErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("iowatch-fs-errors-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    const auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::filesystem::path root_;
};

TEST_F(FilesystemErrorsTest, Ext4CountAndTimes) {
  Write("fs/ext4/loop3/errors_count", "2\n");
  Write("fs/ext4/loop3/first_error_time", "1733270000\n");
  Write("fs/ext4/loop3/last_error_time", "1733279999\n");
  const auto errors = ReadExt4Errors(FileTree(root_), "loop3");
  ASSERT_TRUE(errors.has_value()) << errors.error().ToString();
  EXPECT_EQ(*errors, (Ext4Errors{2, 1733270000, 1733279999}));
  EXPECT_FALSE(ReadExt4Errors(FileTree(root_), "loop4").has_value());  // not ext4's
}

TEST_F(FilesystemErrorsTest, Ext4GarbageIsAnErrorWithItsPath) {
  Write("fs/ext4/sda1/errors_count", "two\n");
  Write("fs/ext4/sda1/first_error_time", "0\n");
  Write("fs/ext4/sda1/last_error_time", "0\n");
  const auto errors = ReadExt4Errors(FileTree(root_), "sda1");
  ASSERT_FALSE(errors.has_value());
  EXPECT_NE(errors.error().ToString().find("fs/ext4/sda1/errors_count"), std::string::npos);
  EXPECT_NE(errors.error().ToString().find("decimal"), std::string::npos);
}

TEST_F(FilesystemErrorsTest, BtrfsEveryDeviceOfTheFilesystemOfAMember) {
  const std::string fsid = "a1b2c3d4-0000-4000-8000-000000000001";
  Write("fs/btrfs/" + fsid + "/devices/loop5", "");
  Write("fs/btrfs/" + fsid + "/devices/loop6", "");
  Write("fs/btrfs/" + fsid + "/devinfo/1/error_stats",
        "write_errs 1\nread_errs 2\nflush_errs 3\ncorruption_errs 4\ngeneration_errs 5\n");
  Write("fs/btrfs/" + fsid + "/devinfo/10/error_stats",
        "read_errs 7\nwrite_errs 0\nflush_errs 0\ncorruption_errs 0\ngeneration_errs 0\n");
  Write("fs/btrfs/" + fsid + "/devinfo/2/error_stats",
        "write_errs 0\nread_errs 0\nflush_errs 0\ncorruption_errs 0\ngeneration_errs 0\n");
  Write("fs/btrfs/other/devices/sdz", "");
  const FileTree sysfs(root_);
  const auto found = FindBtrfsFsid(sysfs, "loop6");
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  EXPECT_EQ(*found, fsid);
  EXPECT_FALSE(FindBtrfsFsid(sysfs, "loop7").has_value());
  const auto errors = ReadBtrfsErrors(sysfs, fsid);
  ASSERT_TRUE(errors.has_value()) << errors.error().ToString();
  ASSERT_EQ(errors->size(), 3u);
  EXPECT_EQ((*errors)[0], (BtrfsDeviceErrors{"1", {1, 2, 3, 4, 5}}));
  EXPECT_EQ((*errors)[1], (BtrfsDeviceErrors{"2", {0, 0, 0, 0, 0}}));
  EXPECT_EQ((*errors)[2], (BtrfsDeviceErrors{"10", {0, 7, 0, 0, 0}}));  // devid order, numeric
}

TEST_F(FilesystemErrorsTest, BtrfsMalformedLineNamesFileAndLine) {
  Write("fs/btrfs/x/devinfo/1/error_stats", "write_errs 0\nread_errs lots\n");
  const auto errors = ReadBtrfsErrors(FileTree(root_), "x");
  ASSERT_FALSE(errors.has_value());
  EXPECT_NE(errors.error().ToString().find("devinfo/1/error_stats:2"), std::string::npos)
      << errors.error().ToString();
}

}  // namespace
}  // namespace iowatch::collectors
