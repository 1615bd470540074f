// The SCSI midlayer's counters as sysfs prints them: hex with "0x", a value
// past 2^31 sign-extended, iotmo_cnt optional, malformed text refused with
// the file named, a disk without them not found; and the 32-bit wrap made
// a 64-bit count.
#include "collectors/scsi/scsi_counters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace iowatch::collectors {
namespace {

class ScsiCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("iowatch-scsi-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_ / "block/sdb/device");
    std::filesystem::create_directories(root_ / "block/nvme0n1/device");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(root_ / "block/sdb/device" / name) << text;
  }
  std::filesystem::path root_;
};

TEST_F(ScsiCountersTest, TheKernelsHexWithItsSignExtensionAndTheOptionalTimeouts) {
  Write("iorequest_cnt", "0xffffffff80000001\n");  // 2^31 + 1, as an int prints in 0x%llx
  Write("iodone_cnt", "0x1a2\n");
  Write("ioerr_cnt", "0x0\n");
  auto c = ReadScsiCounters(FileTree(root_), "sdb");
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->requests, 0x80000001u);
  EXPECT_EQ(c->done, 0x1a2u);
  EXPECT_EQ(c->errors, 0u);
  EXPECT_FALSE(c->timeouts);  // before 2.6.37
  Write("iotmo_cnt", "0x7\n");
  EXPECT_EQ(ReadScsiCounters(FileTree(root_), "sdb")->timeouts, 7u);
}

TEST_F(ScsiCountersTest, ADiskWithoutThemIsNotFoundAndBadTextNamesItsFile) {
  const auto none = ReadScsiCounters(FileTree(root_), "nvme0n1");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  Write("iorequest_cnt", "0x10\n");
  Write("iodone_cnt", "0x10\n");
  for (const char* bad : {"12\n", "0x\n", "0xzz\n", "0x10 0x20\n"}) {
    Write("ioerr_cnt", bad);
    const auto c = ReadScsiCounters(FileTree(root_), "sdb");
    ASSERT_FALSE(c) << bad;
    EXPECT_EQ(c.error().code, ErrorCode::kParse) << bad;
    EXPECT_NE(c.error().path.find("block/sdb/device/ioerr_cnt"), std::string::npos);
    EXPECT_NE(c.error().message.find("expected a counter"), std::string::npos);
  }
}

TEST(ScsiCounterExtender, GrowsPastEachWrapFromTheFirstReading) {
  ScsiCounterExtender e;
  EXPECT_EQ(e.Extend(0xfffffff0u), 0xfffffff0u);
  EXPECT_EQ(e.Extend(0xfffffff8u), 0xfffffff8u);
  EXPECT_EQ(e.Extend(0x10u), 0x100000010u);                // wrapped: 0x18 more
  EXPECT_EQ(e.Extend(0x10u), 0x100000010u);                // no change
  EXPECT_EQ(e.Extend(0xffffffff00000020u), 0x100000020u);  // sign-extended text: low 32 bits
}

}  // namespace
}  // namespace iowatch::collectors
