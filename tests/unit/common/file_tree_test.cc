// ReadFile and FileTree: errors that name the path, and the size limit.
#include "common/file_tree.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

TEST(FileTree, MissingFileIsNotFoundWithPath) {
  FileTree tree("/nonexistent-root");
  const auto r = tree.Read("diskstats");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().path, "/nonexistent-root/diskstats");
}

TEST(ReadFile, AnEndlessFileStopsAtTheLimitWithAClearError) {
  const auto r = ReadFile("/dev/zero", {.max_bytes = 1 << 20});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(), "/dev/zero: cannot read: longer than 1048576 bytes");
}

TEST(ReadFile, ProcfsFilesOfSizeZeroAreReadToTheEnd) {
  const auto r = ReadFile("/proc/self/status");
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_NE(r->find("VmRSS:"), std::string::npos);
}

TEST(ReadFile, TheCallersWordsNameTheFailure) {
  const auto r =
      ReadFile("/", {.open_error = "cannot open config", .read_error = "cannot read config"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().ToString(), "/: cannot read config: Is a directory");
}

}  // namespace
}  // namespace iowatch
