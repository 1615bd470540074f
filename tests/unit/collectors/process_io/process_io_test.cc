// /proc/PID/io and /proc/PID/cgroup of every process: the parser on the
// kernel's layout and malformed text, systemd's tree picked from the cgroup
// lines of v2, hybrid and v1 hosts, and processes that vanish or refuse.
#include "collectors/process_io/process_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace iowatch::collectors {
namespace {

constexpr const char* kIo =
    "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\n"
    "cancelled_write_bytes: 512\n";

TEST(ParseProcessIo, StorageBytesAndCancelledWrites) {
  const auto io = ParseProcessIo(kIo, "/proc/1/io");
  ASSERT_TRUE(io) << io.error().ToString();
  EXPECT_EQ(*io, (ProcessIo{4096, 8192, 512}));
  const auto bad = ParseProcessIo("read_bytes: x\nwrite_bytes: 1\n", "/proc/7/io");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().ToString(),
            "/proc/7/io:1: expected 'read_bytes: <bytes>', found "
            "'read_bytes: x'");
  EXPECT_FALSE(ParseProcessIo("rchar: 1\n", "/proc/7/io"));  // no storage lines
}

TEST(UnitCgroupPathIn, TheUnifiedLineElseNameSystemdElseBlkio) {
  EXPECT_EQ(UnitCgroupPathIn("0::/system.slice/ssh.service\n"), "system.slice/ssh.service");
  EXPECT_EQ(UnitCgroupPathIn("9:name=systemd:/system.slice/a.service\n7:blkio:/\n"
                             "0::/system.slice/a.service\n"),
            "system.slice/a.service");
  EXPECT_EQ(UnitCgroupPathIn("9:name=systemd:/user.slice/user-1000.slice\n7:blkio:/x\n"),
            "user.slice/user-1000.slice");
  EXPECT_EQ(UnitCgroupPathIn("7:blkio:/x\n"), "x");
  EXPECT_EQ(UnitCgroupPathIn(""), "");
}

TEST(ReadProcessIo, EveryProcessWithItsCgroupSkippingTheGoneAndCountingTheRefused) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("iowatch-procs-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  for (const char* pid : {"1", "812", "900"}) std::filesystem::create_directories(root / pid);
  std::filesystem::create_directories(root / "sys");  // not a process
  std::ofstream(root / "1/io") << kIo;
  std::ofstream(root / "1/cgroup") << "0::/init.scope\n";
  std::ofstream(root / "812/io") << "read_bytes: 1048576\nwrite_bytes: 0\n";
  std::ofstream(root / "812/cgroup") << "0::/system.slice/postgresql.service\n";
  // 900 exited between the listing and the read: no io file, not counted.
  std::filesystem::create_directories(root / "901");
  std::ofstream(root / "901/io") << kIo;
  std::filesystem::permissions(root / "901/io", std::filesystem::perms::none);
  const ProcessIoReading r = ReadProcessIo(FileTree(root));
  std::filesystem::remove_all(root);
  ASSERT_TRUE(r.by_pid.contains(812));
  EXPECT_EQ(r.by_pid.at(812).cgroup, "system.slice/postgresql.service");
  EXPECT_EQ(r.by_pid.at(812).io.read_bytes, 1048576u);
  EXPECT_EQ(r.by_pid.at(1).cgroup, "init.scope");
  EXPECT_FALSE(r.by_pid.contains(900));
  // Root reads a file without permissions; anyone else is refused and counts it.
  EXPECT_EQ(r.unreadable, geteuid() == 0 ? 0u : 1u);
  EXPECT_EQ(r.by_pid.contains(901), geteuid() == 0);
}

TEST(ParseProcessStat, ParentAndStartAfterTheCommandsLastParenthesis) {
  // proc(5): pid (comm) state ppid ... starttime is the 22nd field.
  const auto init = ParseProcessStat(
      "1 (systemd) S 0 1 1 0 -1 4194560 49512 5469186 91 1585 141 126 13048 5291 20 0 1 0 27 "
      "171192320 3215\n");
  ASSERT_TRUE(init);
  EXPECT_EQ(init->ppid, 0u);
  EXPECT_EQ(init->start_ticks, 27u);
  // A command may hold spaces and parentheses: ") S 1" inside it is no end.
  const auto odd =
      ParseProcessStat("4242 (a) S 1 (b) R 812 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 1 1\n");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->ppid, 812u);
  EXPECT_EQ(odd->start_ticks, 987654u);
  EXPECT_FALSE(ParseProcessStat("4242 (cut short) S 1 1\n"));
  EXPECT_FALSE(ParseProcessStat("no parenthesis at all"));
}

}  // namespace
}  // namespace iowatch::collectors
