// WriteWholeFile: the new text or the old, through a temporary file of its
// own (no symlink under a fixed name followed, no two writers sharing one),
// synced; a path the user named may be a pipe but never a block device; the
// daemon's own state file is replaced, never written through.
#include "common/whole_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace iowatch {
namespace {

class WholeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/iowatch-whole-file-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string Text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The directory's names but `except`.
  std::vector<std::string> Others(const std::string& except) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().filename() != except) names.push_back(entry.path().filename().string());
    }
    return names;
  }
  std::filesystem::path dir_;
};

TEST_F(WholeFileTest, ReplacesTheFileAndLeavesNoTemporaryBehind) {
  const auto path = dir_ / "state.json";
  std::ofstream(path) << "old text that is longer than the new\n";
  ASSERT_TRUE(WriteWholeFile(path.string(), "new\n"));
  EXPECT_EQ(Text(path), "new\n");
  EXPECT_EQ(Others("state.json"), std::vector<std::string>{});
}

// The old PATH.tmp was opened with fopen: a symlink planted under that name
// had its target overwritten with the text.
TEST_F(WholeFileTest, ASymlinkUnderTheOldTemporaryNameIsNotFollowed) {
  const auto victim = dir_ / "victim";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, dir_ / "state.json.tmp");
  ASSERT_TRUE(WriteWholeFile((dir_ / "state.json").string(), "{}\n"));
  EXPECT_EQ(Text(victim), "precious\n");
  EXPECT_EQ(Text(dir_ / "state.json"), "{}\n");
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "state.json.tmp"));
}

// The daemon's state file as a symlink to a file outside: replaced, the file
// outside never written.
TEST_F(WholeFileTest, TheDaemonsStateFileAsASymlinkIsReplacedNotFollowed) {
  const auto outside = dir_ / "outside";
  std::ofstream(outside) << "precious\n";
  const auto path = dir_ / "kmsg-errors.json";
  std::filesystem::create_symlink(outside, path);
  ASSERT_TRUE(WriteWholeFile(path.string(), "{}\n", {.replace_only = true}));
  EXPECT_EQ(Text(outside), "precious\n");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(Text(path), "{}\n");
}

// A FIFO as the state file: the old code opened it to write and waited for a
// reader forever (here a reader is held open, so it wrote into it instead).
TEST_F(WholeFileTest, TheDaemonsStateFileAsAFifoIsReplacedNeitherWaitedOnNorWritten) {
  const auto path = dir_ / "kmsg-errors.json";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteWholeFile(path.string(), "{}\n", {.replace_only = true}));
  char byte = 0;
  EXPECT_NE(::read(reader, &byte, 1), 1) << "the text went into the FIFO";
  ::close(reader);
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_EQ(Text(path), "{}\n");
}

// Needs CAP_MKNOD (root). The device number is one no driver has, so that
// even a write through it could not reach a disk; the old code tried (ENXIO).
TEST_F(WholeFileTest, ASymlinkToABlockDeviceIsNeverWritten) {
  const auto device = dir_ / "disk";
  if (::mknod(device.c_str(), S_IFBLK | 0600, makedev(4095, 1048575)) != 0) {
    GTEST_SKIP() << "cannot create a block device node here (needs CAP_MKNOD)";
  }
  const auto state = dir_ / "kmsg-errors.json";
  std::filesystem::create_symlink(device, state);
  ASSERT_TRUE(WriteWholeFile(state.string(), "{}\n", {.replace_only = true}));
  EXPECT_EQ(Text(state), "{}\n");
  EXPECT_TRUE(std::filesystem::is_block_file(device));

  const auto exported = dir_ / "export.json";
  std::filesystem::create_symlink(device, exported);
  const Status refused = WriteWholeFile(exported.string(), "{}\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().ToString(),
            exported.string() +
                ": cannot write: expected a regular file, a pipe or a terminal, found a block "
                "device");
  EXPECT_TRUE(std::filesystem::is_symlink(exported));
}

TEST_F(WholeFileTest, APipeTheUserNamedIsWrittenInPlace) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_TRUE(WriteWholeFile("/proc/self/fd/" + std::to_string(fds[1]), "{}\n"));
  ::close(fds[1]);
  char text[8] = {};
  EXPECT_EQ(::read(fds[0], text, sizeof text), 3);
  ::close(fds[0]);
  EXPECT_STREQ(text, "{}\n");
}

// Two writers of one path (the old fixed PATH.tmp: one truncated the file
// the other had written and was renaming, so that the path held part of a
// text, or renamed it away under the other, whose rename then failed).
TEST_F(WholeFileTest, TwoWritersOfOnePathEachWriteAWholeFile) {
  const auto path = (dir_ / "state.json").string();
  const std::string texts[2] = {std::string(65536, 'a') + "\n", std::string(32768, 'b') + "\n"};
  std::atomic<int> failures = 0;
  std::atomic<int> running = 2;
  std::vector<std::thread> writers;
  for (const std::string& text : texts) {
    writers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        if (!WriteWholeFile(path, text)) ++failures;
      }
      --running;
    });
  }
  int partial = 0;  // what a reader saw that neither wrote
  while (running > 0) {
    const std::string seen = Text(path);
    if (!seen.empty() && seen != texts[0] && seen != texts[1]) ++partial;
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(partial, 0);
  const std::string last = Text(path);
  EXPECT_TRUE(last == texts[0] || last == texts[1]) << last.size() << " bytes";
  EXPECT_EQ(Others("state.json"), std::vector<std::string>{});
}

TEST_F(WholeFileTest, AMissingDirectoryIsNamed) {
  const auto path = dir_ / "absent" / "state.json";
  const Status r = WriteWholeFile(path.string(), "{}\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().ToString(), path.string() + ": cannot create: the directory " +
                                      (dir_ / "absent").string() + ": No such file or directory");
}

}  // namespace
}  // namespace iowatch
