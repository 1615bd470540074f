// ReadFile and FileTree: errors that name the path, and the size limit.
#include "common/file_tree.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace iowatch {
namespace {

TEST(FileTree, MissingFileIsNotFoundWithPath) {
  FileTree tree("/nonexistent-root");
  const auto r = tree.Read("diskstats");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().path, "/nonexistent-root/diskstats");
}

// A temporary directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/iowatch-file-tree-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(ReadFile, AFileLongerThanTheLimitIsRefusedWithAClearError) {
  ScratchDir dir;
  const auto big = dir.path() / "big";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, (1 << 20) + 1);  // sparse: costs no disk
  const auto r = ReadFile(big, {.max_bytes = 1 << 20});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(), big.string() + ": cannot read: longer than 1048576 bytes");
  EXPECT_EQ(ReadFile(big, {.max_bytes = (1 << 20) + 1})->size(), (1u << 20) + 1);
}

// Adversarial tests: /dev/zero grew a reader to gigabytes, a
// FIFO in place of diskstats, a sysfs attribute or the config blocked forever.
TEST(ReadFile, FifosAndDevicesAreRefusedBeforeTheFirstRead) {
  ScratchDir dir;
  const auto fifo = dir.path() / "diskstats";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = FileTree(dir.path()).Read("diskstats");  // would block without O_NONBLOCK
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(),
            fifo.string() + ": cannot read: expected a regular file, found a FIFO");
  const auto zero = ReadFile("/dev/zero");
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().ToString(),
            "/dev/zero: cannot read: expected a regular file, found a character device");
}

// The kernel reads a path up to its first NUL byte, so
// "/proc/self/status\0x" read /proc/self/status (and a TLS cert_file of
// "/etc/ssl\0x" was refused as "/etc/ssl").
TEST(ReadFile, APathWithANulByteIsRefusedNotCut) {
  const auto r = ReadFile(std::string("/proc/self/status\0x", 19));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(),
            "/proc/self/status\\x00x: cannot open: expected a path without NUL bytes");
}

TEST(ReadFile, AFileTheUserNamedMayBeAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "{}\n", 3), 3);
  ::close(fds[1]);
  const auto r = ReadFile(fmt::format("/proc/self/fd/{}", fds[0]), {.regular_only = false});
  ::close(fds[0]);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, "{}\n");
}

// `baseline import FIFO` blocked in open(2) for ever when nothing wrote to
// the FIFO. A test that hangs is failed by the watchdog thread instead.
TEST(ReadFile, AFifoNothingWritesToIsAClearErrorWithinTheWait) {
  ScratchDir dir;
  const auto fifo = dir.path() / "import.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] {
    return ReadFile(fifo, {.read_error = "cannot read baseline JSON",
                           .regular_only = false,
                           .fifo_wait = std::chrono::milliseconds(200)});
  });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));  // let the blocked reader go
    FAIL() << "ReadFile blocked on a FIFO with no writer";
  }
  const auto r = read.get();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_EQ(r.error().ToString(),
            fifo.string() +
                ": cannot read baseline JSON: a FIFO nothing wrote to within 200 ms (is its "
                "writer running?)");
}

TEST(ReadFile, AFifoIsReadWholeWhenItsWriterComesWithinTheWait) {
  ScratchDir dir;
  const auto fifo = dir.path() / "import.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for the reader
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "{\"a\"", 4), 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the rest later
    ASSERT_EQ(::write(fd, ": 1}", 4), 4);
    ::close(fd);
  });
  const auto r = ReadFile(fifo, {.regular_only = false, .fifo_wait = std::chrono::seconds(10)});
  writer.join();
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(*r, "{\"a\": 1}");
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
  EXPECT_EQ(r.error().ToString(),
            "/: cannot read config: expected a regular file, found a directory");
}

TEST(ReadFile, ASymlinkIsRefusedNotFollowedWhenTheCallerSaysSo) {
  ScratchDir dir;
  std::ofstream(dir.path() / "elsewhere") << "secret\n";
  std::filesystem::create_symlink(dir.path() / "elsewhere", dir.path() / "state.json");
  const auto r = ReadFile(dir.path() / "state.json", {.follow_symlinks = false});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(), (dir.path() / "state.json").string() +
                                      ": cannot open: expected a regular file, found a "
                                      "symbolic link");
  EXPECT_EQ(ReadFile(dir.path() / "state.json").value_or(""), "secret\n");  // the default follows
}

// What `iowatch trace` reads back, which the traced program may have filled
// with junk (256 MB of it made the reader hold 800 MB): a line at a time,
// an over-long line neither held nor passed, the lines after it read.
TEST(ForEachLineOfFile, LongLinesAreSkippedAndTheOthersPassed) {
  ScratchDir dir;
  const auto path = dir.path() / "lines";
  {
    std::ofstream out(path);
    out << "one\n" << std::string(3 << 20, 'x') << "\n\nfour\n" << std::string(100, 'y');
  }
  std::vector<std::pair<int, std::string>> lines;
  std::vector<int> too_long;
  const Status read = ForEachLineOfFile(
      path, [&](std::string_view line, int number) { lines.emplace_back(number, line); },
      [&](int number) { too_long.push_back(number); }, {.max_bytes = 1 << 20});
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  const std::vector<std::pair<int, std::string>> expected{
      {1, "one"}, {3, ""}, {4, "four"}, {5, std::string(100, 'y')}};
  EXPECT_EQ(lines, expected);
  EXPECT_EQ(too_long, std::vector<int>{2});
}

TEST(ForEachLineOfFile, AFifoIsRefusedNotWaitedOn) {
  ScratchDir dir;
  const auto fifo = dir.path() / "lines";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status read = ForEachLineOfFile(
      fifo, [](std::string_view, int) {}, [](int) {}, {.read_error = "cannot read the trace"});
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().ToString(),
            fifo.string() + ": cannot read the trace: expected a regular file, found a FIFO");
}

// A procfs file is kept open and each read through the kept descriptor is
// written afresh: /proc/uptime read again 50 ms later has moved on.
TEST(FileTree, ProcfsEntryCountIsTheDescriptorsListingFindsButItsOwn) {
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) fds.push_back(::open("/proc/self/stat", O_RDONLY | O_CLOEXEC));
  const FileTree proc("/proc");
  const auto count = proc.ProcfsEntryCount("self/fd");
  const auto listed = proc.List("self/fd");  // its own directory descriptor is among them
  ASSERT_TRUE(listed);
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/fd", &st), 0);
  if (st.st_size == 0) {  // a kernel before 6.2: the caller lists instead
    EXPECT_FALSE(count.has_value());
  } else {
    ASSERT_TRUE(count.has_value());
    EXPECT_EQ(*count + 1, listed->size());
    EXPECT_GE(*count, 20u);
  }
  for (const int fd : fds) ::close(fd);
}

TEST(FileTree, ProcfsEntryCountIsNothingOutsideProcfs) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "self/fd");
  std::ofstream(dir.path() / "self/fd/0") << "";
  EXPECT_FALSE(FileTree(dir.path().string()).ProcfsEntryCount("self/fd").has_value());
  EXPECT_FALSE(FileTree(dir.path().string()).ProcfsEntryCount("missing").has_value());
}

TEST(KeptFiles, AProcfsFileIsKeptAndEachReadIsFresh) {
  KeptFiles kept;
  const FileTree proc = FileTree("/proc").Keeping(kept);
  const auto first = proc.Read("uptime");
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  EXPECT_EQ(kept.Kept(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto second = proc.Read("uptime");
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  EXPECT_EQ(kept.Kept(), 1u);
  EXPECT_GT(std::stod(*second), std::stod(*first)) << *first << " then " << *second;
}

// A file of any other filesystem (a fixture tree) is opened afresh each
// read: one replaced by a rename is read anew.
TEST(KeptFiles, AFileOutsideProcAndSysIsOpenedAfreshEachRead) {
  ScratchDir dir;
  std::ofstream(dir.path() / "diskstats") << "first\n";
  KeptFiles kept;
  const FileTree tree = FileTree(dir.path()).Keeping(kept);
  EXPECT_EQ(tree.Read("diskstats").value_or("?"), "first\n");
  EXPECT_EQ(kept.Kept(), 0u);
  std::ofstream(dir.path() / "next") << "second\n";
  std::filesystem::rename(dir.path() / "next", dir.path() / "diskstats");
  EXPECT_EQ(tree.Read("diskstats").value_or("?"), "second\n");
  EXPECT_EQ(tree.Read("missing").error().code, ErrorCode::kNotFound);
}

// A process's file kept open after the process is gone: the read through
// it fails, the path is opened again and is not found; nothing stays kept.
TEST(KeptFiles, AGoneProcesssFileIsNotFoundAndNoLongerKept) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  KeptFiles kept;
  const FileTree proc = FileTree("/proc").Keeping(kept);
  const std::string stat = fmt::format("{}/stat", child);
  const auto alive = proc.Read(stat);
  ASSERT_TRUE(alive.has_value()) << alive.error().ToString();
  EXPECT_EQ(kept.Kept(), 1u);
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const auto gone = proc.Read(stat);
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound) << gone.error().ToString();
  EXPECT_EQ(kept.Kept(), 0u);
}

// Sweep closes what was not read since the last Sweep; past its capacity a
// file is read but not kept.
TEST(KeptFiles, SweepClosesWhatWasNotReadAndTheCapacityBoundsWhatIsKept) {
  KeptFiles kept(1);
  const FileTree proc = FileTree("/proc").Keeping(kept);
  ASSERT_TRUE(proc.Read("uptime").has_value());
  ASSERT_TRUE(proc.Read("loadavg").has_value());  // read, not kept: at capacity
  EXPECT_EQ(kept.Kept(), 1u);
  kept.Sweep();
  EXPECT_EQ(kept.Kept(), 1u);  // uptime was read since
  kept.Sweep();
  EXPECT_EQ(kept.Kept(), 0u);  // not read since the last Sweep
  ASSERT_TRUE(proc.Read("loadavg").has_value());
  EXPECT_EQ(kept.Kept(), 1u);
}

}  // namespace
}  // namespace iowatch
