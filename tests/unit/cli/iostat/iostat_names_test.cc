// Device names reach the terminal escaped: a kernel
// device or a device-mapper name is bytes another user chose ("sd\e]0;PWNED\a"
// sets a terminal's title, "\e[2J" clears it). A fixture tree of one sample
// through the whole session, as `iostat -x -p ALL` and `iostat -N` read it.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "cli/iostat/iostat_session.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

namespace fs = std::filesystem;

constexpr char kDisk[] = "sd\x1b]0;PWNED\a\x1b[2J";
constexpr char kDmName[] = "vg\x1b[2J-root\xff";

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// proc/{diskstats,stat,uptime} and sys/block/<name>/stat for the disk and
// dm-0, whose device-mapper name is kDmName.
void MakeTree(const fs::path& root) {
  const std::string counters = " 1000 200 80000 5000 2000 500 160000 12000 1 9000 17000";
  Write(root / "proc/diskstats", std::string("   8       0 ") + kDisk + counters + "\n" +
                                     " 253       0 dm-0" + counters + "\n");
  Write(root / "proc/stat", "cpu  10000 500 3000 80000 1000 200 300 100 400 50\n");
  Write(root / "proc/uptime", "1000.00 1900.00\n");
  Write(root / "sys/block" / kDisk / "stat", counters + "\n");
  Write(root / "sys/block/dm-0/stat", counters + "\n");
  Write(root / "sys/block/dm-0/dm/name", std::string(kDmName) + "\n");
  fs::create_directories(root / "sys/devices/system/cpu/cpu0");
}

std::string Report(const fs::path& root, const std::vector<std::string>& args) {
  auto opts = ParseIostatArgs(args);
  EXPECT_TRUE(opts.has_value());
  const HostInfo host{"Linux", "host\x1b[2J", "6.1", "x86_64", 1};
  IostatSession session(
      *opts, host, [](const char*) { return std::string("03/05/24"); }, false, false);
  auto sample = ReadIostatSample(FileTree(root / "proc"), FileTree(root / "sys"));
  EXPECT_TRUE(sample.has_value()) << sample.error().ToString();
  return session.Start(std::move(*sample)) + session.Finish();
}

TEST(IostatNames, EscapesAndControlsInDeviceNamesArePrintedVisibly) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  MakeTree(dir.path());
  const std::string all = Report(dir.path(), {"-x", "-p", "ALL"});
  EXPECT_NE(all.find("sd\\x1b]0;PWNED\\x07\\x1b[2J"), std::string::npos) << all;
  EXPECT_NE(all.find("host\\x1b[2J"), std::string::npos) << all;  // the banner's node name
  const std::string named = Report(dir.path(), {"-N", "-x"});
  // sysfs attributes are made plain where they are read (block_devices.cc:
  // a control character becomes a space, invalid UTF-8 U+FFFD); the kernel's
  // device names are not, and are escaped as printed.
  EXPECT_NE(named.find("vg [2J-root\xEF\xBF\xBD"), std::string::npos) << named;
  EXPECT_NE(named.find("sd\\x1b]0;PWNED\\x07\\x1b[2J"), std::string::npos) << named;
  for (const std::string& out : {all, named}) {
    for (const char raw : {'\x1b', '\a', '\xff'}) {
      EXPECT_EQ(out.find(raw), std::string::npos) << out;
    }
  }
  // JSON has its own escapes: the name as it is, as a JSON string.
  const std::string json = Report(dir.path(), {"-o", "JSON", "-p", "ALL"});
  EXPECT_NE(json.find(R"("disk_device": "sd\u001b]0;PWNED\u0007\u001b[2J")"), std::string::npos)
      << json;
}

}  // namespace
}  // namespace iowatch::daemon
