// Tests of what touches real storage: PrepareTarget (create, fill, reuse,
// extend, refill, refusals, tmpfs, alignment, block devices), the probe-file
// marker and layout, and the psync and io_uring engines. Each test works in
// a fresh directory under /var/tmp (ext4 on CI) and removes it; loop devices
// are detached and private mounts live in a child's mount namespace, so
// nothing outlives a test.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "probes/engines/engine.h"
#include "probes/engines/psync_engine.h"
#include "probes/engines/uring_engine.h"
#include "probes/target/probe_file_layout.h"
#include "probes/target/probe_target.h"
#include "tests/unit/probes/child_process.h"
#include "tests/unit/test_files.h"

namespace iowatch::probes {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
using test::kSkipExit;

using iowatch::testing::TempDir;

bool IsTmpfs(const std::string& path) {
  struct statfs fs {};
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == 0x01021994;  // TMPFS_MAGIC
}

JobSpec FileJob(const std::string& path, uint64_t size, RwMode rw, bool direct) {
  JobSpec spec;
  spec.filename = path;
  spec.size = size;
  spec.rw = rw;
  spec.direct = direct;
  return spec;
}

std::string GetXattr(const std::string& path) {
  char value[64];
  const ssize_t n = getxattr(path.c_str(), "user.iowatch.probe", value, sizeof value);
  return n < 0 ? std::string("<none>") : std::string(value, static_cast<size_t>(n));
}

std::vector<char> ReadBytes(const std::string& path, uint64_t offset, size_t length) {
  std::vector<char> bytes(length);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const ssize_t n = fd < 0 ? -1 : pread(fd, bytes.data(), length, static_cast<off_t>(offset));
  if (fd >= 0) close(fd);
  bytes.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return bytes;
}

void WriteBytes(const std::string& path, uint64_t offset, const std::vector<char>& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Data that a compressor could not shrink has (almost) every byte value in
// a 4 KiB block; zeros, text and repeated patterns have few.
void ExpectIncompressible(const std::vector<char>& block) {
  ASSERT_EQ(block.size(), 4096u);
  std::set<char> values(block.begin(), block.end());
  EXPECT_GT(values.size(), 240u);
}

std::string RunCommand(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char chunk[256];
  while (fgets(chunk, sizeof chunk, pipe) != nullptr) output += chunk;
  pclose(pipe);
  return output;
}

// Runs `body` in a child with a private mount namespace in which `fstype`
// is mounted on `dir`, so the mount vanishes with the child whatever
// happens. Returns the child's exit code (kSkipExit when it could not mount).
int InPrivateMount(const std::string& fstype, const std::string& options, const std::string& dir,
                   const std::function<int()>& body) {
  const auto mount_private = [&] {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("none", dir.c_str(), fstype.c_str(), 0, options.c_str()) != 0) {
      fprintf(stderr, "cannot mount %s: %s\n", fstype.c_str(), strerror(errno));
      return false;
    }
    return true;
  };
  return test::InChild(mount_private, body);
}

// ---------------------------------------------------------------- files

class PrepareTargetTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()) << "mkdtemp under /var/tmp failed"; }
  TempDir dir_;
};

TEST_F(PrepareTargetTest, CreatesAndFillsFileWithIncompressibleData) {
  const std::string path = dir_.File("job.0.0");
  JobSpec spec = FileJob("", 4 * kMiB, RwMode::kRandRead, true);
  spec.directory = dir_.path().string();
  spec.name = "job";
  auto target = PrepareTarget(spec, {});
  ASSERT_TRUE(target) << target.error().ToString();
  EXPECT_EQ(target->path, path);
  EXPECT_TRUE(target->created);
  EXPECT_FALSE(target->is_block_device);
  EXPECT_EQ(target->region_offset, 0u);
  EXPECT_EQ(target->region_size, 4 * kMiB);
  EXPECT_GE(target->offset_alignment, 512u);
  EXPECT_EQ(target->memory_alignment % 4096, 0u);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(target->device, st.st_dev);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 4 * kMiB);
  EXPECT_EQ(GetXattr(path), std::to_string(4 * kMiB));
  const int flags = fcntl(target->fd, F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_RDONLY);
  EXPECT_NE(flags & O_DIRECT, 0);

  const std::vector<char> zeros(4096, 0);
  std::vector<std::vector<char>> blocks;
  for (uint64_t offset : {uint64_t{0}, kMiB, 3 * kMiB + 4096, 4 * kMiB - 4096}) {
    blocks.push_back(ReadBytes(path, offset, 4096));
    EXPECT_NE(blocks.back(), zeros) << "offset " << offset;
    ExpectIncompressible(blocks.back());
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (size_t j = i + 1; j < blocks.size(); ++j) EXPECT_NE(blocks[i], blocks[j]);
  }
  const std::string extents = RunCommand("filefrag -v " + path + " 2>&1");
  if (extents.find("extents found") != std::string::npos) {
    EXPECT_EQ(extents.find("unwritten"), std::string::npos) << extents;
  }
}

TEST_F(PrepareTargetTest, ReusesOwnFileWithoutRefilling) {
  const std::string path = dir_.File("reuse");
  ASSERT_TRUE(PrepareTarget(FileJob(path, 2 * kMiB, RwMode::kRead, true), {}));
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  const auto content = ReadBytes(path, 0, 2 * kMiB);

  auto again = PrepareTarget(FileJob(path, kMiB, RwMode::kRandWrite, true), {});
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->region_size, kMiB);
  EXPECT_EQ(fcntl(again->fd, F_GETFL) & O_ACCMODE, O_RDWR);
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_EQ(ReadBytes(path, 0, 2 * kMiB), content);

  // size=0: the whole existing file.
  auto whole = PrepareTarget(FileJob(path, 0, RwMode::kRead, true), {});
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->region_size, 2 * kMiB);
}

TEST_F(PrepareTargetTest, ExtendsOwnFileAndFillsOnlyTheNewPart) {
  const std::string path = dir_.File("extend");
  ASSERT_TRUE(PrepareTarget(FileJob(path, kMiB, RwMode::kRead, true), {}));
  const auto first = ReadBytes(path, 0, kMiB);

  JobSpec spec = FileJob(path, 2 * kMiB, RwMode::kRead, true);
  spec.offset = kMiB;
  auto target = PrepareTarget(spec, {});
  ASSERT_TRUE(target) << target.error().ToString();
  EXPECT_FALSE(target->created);
  EXPECT_EQ(target->region_offset, kMiB);
  EXPECT_EQ(target->region_size, 2 * kMiB);
  EXPECT_EQ(FileSize(path), 3 * kMiB);
  EXPECT_EQ(GetXattr(path), std::to_string(3 * kMiB));
  EXPECT_EQ(ReadBytes(path, 0, kMiB), first);
  ExpectIncompressible(ReadBytes(path, 2 * kMiB, 4096));
  ExpectIncompressible(ReadBytes(path, 3 * kMiB - 4096, 4096));
}

TEST_F(PrepareTargetTest, RefillsWhatACrashLeftUnfilled) {
  const std::string path = dir_.File("crash");
  ASSERT_TRUE(PrepareTarget(FileJob(path, 2 * kMiB, RwMode::kRead, false), {}));
  const auto first = ReadBytes(path, 0, kMiB);
  // As if the process died after fallocate, halfway through the fill.
  WriteBytes(path, kMiB, std::vector<char>(kMiB, 0));
  const std::string half = std::to_string(kMiB);
  ASSERT_EQ(setxattr(path.c_str(), "user.iowatch.probe", half.data(), half.size(), 0), 0);

  auto target = PrepareTarget(FileJob(path, 2 * kMiB, RwMode::kRead, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  EXPECT_EQ(GetXattr(path), std::to_string(2 * kMiB));
  EXPECT_EQ(ReadBytes(path, 0, kMiB), first);
  ExpectIncompressible(ReadBytes(path, kMiB, 4096));
  ExpectIncompressible(ReadBytes(path, 2 * kMiB - 4096, 4096));

  // An unreadable marker counts as nothing filled.
  ASSERT_EQ(setxattr(path.c_str(), "user.iowatch.probe", "junk", 4, 0), 0);
  ASSERT_TRUE(PrepareTarget(FileJob(path, 2 * kMiB, RwMode::kRead, false), {}));
  EXPECT_EQ(GetXattr(path), std::to_string(2 * kMiB));
  EXPECT_NE(ReadBytes(path, 0, kMiB), first);
}

TEST_F(PrepareTargetTest, MarkerRoundTripsAndJunkMeansNothingFilled) {
  const std::string path = dir_.File("marked");
  std::ofstream(path) << "data";
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const auto where = ProbeFilePath::Open(path);
  ASSERT_TRUE(where) << where.error().ToString();
  const auto absent = ReadProbeFileMarker(fd, *where);
  ASSERT_TRUE(absent) << absent.error().ToString();
  EXPECT_FALSE(absent->present);
  ASSERT_TRUE(WriteProbeFileMarker(fd, *where, 12345));
  const auto marker = ReadProbeFileMarker(fd, *where);
  ASSERT_TRUE(marker) << marker.error().ToString();
  EXPECT_TRUE(marker->present);
  EXPECT_EQ(marker->filled_bytes, 12345u);
  ASSERT_EQ(setxattr(path.c_str(), "user.iowatch.probe", "12x", 3, 0), 0);
  const auto junk = ReadProbeFileMarker(fd, *where);
  close(fd);
  ASSERT_TRUE(junk) << junk.error().ToString();
  EXPECT_TRUE(junk->present);
  EXPECT_EQ(junk->filled_bytes, 0u);
  EXPECT_EQ(ProbeFileSidecarPath(path), path + ".iowatch");
}

TEST_F(PrepareTargetTest, LayOutFillsFromTheAlignedMarkAndRaisesTheMarker) {
  const std::string path = dir_.File("laid");
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  const std::vector<char> ones(8192, 1);
  ASSERT_EQ(pwrite(fd, ones.data(), ones.size(), 0), 8192);
  // 6000 bytes are vouched for; with alignment 4096 the fill starts at 4096.
  const auto where = ProbeFilePath::Open(path);
  ASSERT_TRUE(where) << where.error().ToString();
  const auto laid = LayOutProbeFile(fd, *where, 6000, kMiB, 4096);
  const auto marker = ReadProbeFileMarker(fd, *where);
  close(fd);
  ASSERT_TRUE(laid) << laid.error().ToString();
  EXPECT_EQ(FileSize(path), kMiB);
  EXPECT_EQ(ReadBytes(path, 0, 4096), std::vector<char>(4096, 1));
  ExpectIncompressible(ReadBytes(path, 4096, 4096));
  ExpectIncompressible(ReadBytes(path, kMiB - 4096, 4096));
  ASSERT_TRUE(marker) << marker.error().ToString();
  EXPECT_TRUE(marker->present);
  EXPECT_EQ(marker->filled_bytes, kMiB);
}

TEST_F(PrepareTargetTest, ForeignFileIsReadButNeverWrittenWithoutDestructive) {
  const std::string path = dir_.File("foreign");
  const std::vector<char> content(kMiB, 'A');
  std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(kMiB));
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);

  auto read = PrepareTarget(FileJob(path, 0, RwMode::kRead, true), {});
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_FALSE(read->created);
  EXPECT_EQ(read->region_size, kMiB);

  for (RwMode rw : {RwMode::kWrite, RwMode::kRandReadWrite}) {
    auto write = PrepareTarget(FileJob(path, 0, rw, true), {});
    ASSERT_FALSE(write);
    EXPECT_EQ(write.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(write.error().path, path);
    EXPECT_NE(write.error().ToString().find("--destructive"), std::string::npos)
        << write.error().ToString();
    EXPECT_NE(write.error().message.find("not created by iowatch"), std::string::npos);
  }
  // fsync=N counts as writing.
  JobSpec fsync_job = FileJob(path, 0, RwMode::kRead, false);
  fsync_job.fsync = 1;
  EXPECT_FALSE(PrepareTarget(fsync_job, {}));

  auto allowed = PrepareTarget(FileJob(path, 0, RwMode::kWrite, true), {.destructive = true});
  ASSERT_TRUE(allowed) << allowed.error().ToString();
  EXPECT_EQ(fcntl(allowed->fd, F_GETFL) & O_ACCMODE, O_RDWR);

  // Never extended, never marked, never rewritten.
  auto bigger = PrepareTarget(FileJob(path, 2 * kMiB, RwMode::kRead, false), {.destructive = true});
  ASSERT_FALSE(bigger);
  EXPECT_NE(bigger.error().message.find("will not extend"), std::string::npos);
  EXPECT_EQ(ReadBytes(path, 0, 2 * kMiB), content);
  EXPECT_EQ(GetXattr(path), "<none>");
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

TEST_F(PrepareTargetTest, OffsetBeyondTheEndIsAnError) {
  const std::string path = dir_.File("short");
  ASSERT_TRUE(PrepareTarget(FileJob(path, kMiB, RwMode::kRead, false), {}));
  JobSpec spec = FileJob(path, 0, RwMode::kRead, false);
  spec.offset = kMiB;
  auto target = PrepareTarget(spec, {});
  ASSERT_FALSE(target);
  EXPECT_NE(target.error().message.find("beyond the end"), std::string::npos);
}

TEST_F(PrepareTargetTest, MissingFileNeedsASizeAndAnExistingDirectory) {
  const std::string path = dir_.File("nosize");
  auto no_size = PrepareTarget(FileJob(path, 0, RwMode::kRead, false), {});
  ASSERT_FALSE(no_size);
  EXPECT_EQ(no_size.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(no_size.error().ToString().find("size is required to create"), std::string::npos);
  EXPECT_EQ(no_size.error().path, path);
  EXPECT_FALSE(Exists(path));

  auto no_dir = PrepareTarget(FileJob(dir_.File("missing/file"), kMiB, RwMode::kRead, false), {});
  ASSERT_FALSE(no_dir);
  EXPECT_EQ(no_dir.error().code, ErrorCode::kNotFound);
  EXPECT_NE(no_dir.error().message.find("does not exist"), std::string::npos);
  EXPECT_FALSE(Exists(dir_.File("missing")));

  auto not_a_file = PrepareTarget(FileJob(dir_.path().string(), kMiB, RwMode::kRead, false), {});
  ASSERT_FALSE(not_a_file);
  EXPECT_EQ(not_a_file.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(PrepareTargetTest, MisalignedDirectJobNamesTheAlignment) {
  const std::string path = dir_.File("align");
  JobSpec spec = FileJob(path, kMiB, RwMode::kRead, true);
  spec.block_size = 1000;
  auto target = PrepareTarget(spec, {});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(target.error().message.find("bs=1000 is not a multiple of the direct-I/O alignment"),
            std::string::npos)
      << target.error().ToString();
  EXPECT_NE(target.error().ToString().find(path), std::string::npos);
  EXPECT_FALSE(Exists(path));  // removed again, not left unfilled

  spec.block_size = 4096;
  spec.offset = 100;
  target = PrepareTarget(spec, {});
  ASSERT_FALSE(target);
  EXPECT_NE(target.error().message.find("offset=100"), std::string::npos);

  // direct=0 has no alignment to meet.
  spec.direct = false;
  spec.block_size = 1000;
  auto buffered = PrepareTarget(spec, {});
  ASSERT_TRUE(buffered) << buffered.error().ToString();
  EXPECT_EQ(buffered->offset_alignment, 1u);
  EXPECT_EQ(buffered->memory_alignment, 4096u);
  EXPECT_EQ(FileSize(path), kMiB + 100);
}

class TmpfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!IsTmpfs("/dev/shm")) GTEST_SKIP() << "/dev/shm is not a tmpfs on this host";
    dir_ = std::make_unique<TempDir>("/dev/shm");
    ASSERT_TRUE(dir_->ok());
  }
  std::unique_ptr<TempDir> dir_;
};

TEST_F(TmpfsTest, DirectIoIsRefusedWithAHint) {
  const std::string path = dir_->File("direct");
  auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kRead, true), {});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(target.error().path, path);
  EXPECT_NE(target.error().message.find("--direct=0"), std::string::npos);
  EXPECT_NE(target.error().message.find("O_DIRECT"), std::string::npos);
  EXPECT_FALSE(Exists(path));

  auto check = CheckFilesystemAllowsDirectIo(dir_->path());
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().code, ErrorCode::kUnsupported);
  EXPECT_TRUE(CheckFilesystemAllowsDirectIo("/var/tmp"));
}

TEST_F(TmpfsTest, BufferedJobWorks) {
  const std::string path = dir_->File("buffered");
  auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kRandWrite, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  EXPECT_TRUE(target->created);
  EXPECT_EQ(target->offset_alignment, 1u);
  EXPECT_EQ(FileSize(path), kMiB);
  ExpectIncompressible(ReadBytes(path, 0, 4096));
  // tmpfs has user xattrs since Linux 6.6; before, the sidecar marker.
  EXPECT_TRUE(GetXattr(path) == std::to_string(kMiB) || Exists(path + ".iowatch"));
}

// ramfs has no xattrs at all: the marker goes to "<path>.iowatch".
TEST_F(PrepareTargetTest, SidecarMarkerWhereXattrsAreUnsupported) {
  const std::string path = dir_.File("ramfs/probe");
  ASSERT_EQ(mkdir(dir_.File("ramfs").c_str(), 0700), 0);
  const int code = InPrivateMount("ramfs", "", dir_.File("ramfs"), [&] {
    auto created = PrepareTarget(FileJob(path, kMiB, RwMode::kRead, false), {});
    CHILD_CHECK(created);
    CHILD_CHECK(created->created);
    struct stat file {};
    stat(path.c_str(), &file);
    std::ifstream sidecar(path + ".iowatch");
    std::string text((std::istreambuf_iterator<char>(sidecar)), std::istreambuf_iterator<char>());
    CHILD_CHECK(text == fmt::format("{} {} {}\n", kMiB, file.st_dev, file.st_ino));
    struct stat before {};
    stat(path.c_str(), &before);
    auto reused = PrepareTarget(FileJob(path, kMiB, RwMode::kWrite, false), {});
    CHILD_CHECK(reused && !reused->created);
    struct stat after {};
    stat(path.c_str(), &after);
    CHILD_CHECK(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    // Without a sidecar the file is foreign.
    const std::string other = dir_.File("ramfs/other");
    std::ofstream(other) << "data";
    CHILD_CHECK(!PrepareTarget(FileJob(other, 0, RwMode::kWrite, false), {}));
    return 0;
  });
  if (code == kSkipExit) GTEST_SKIP() << "cannot mount ramfs in a private mount namespace";
  EXPECT_EQ(code, 0);
}

// Adversarial test: on a filesystem without xattrs, a sidecar
// planted beside a foreign file made `--rw=write` overwrite it without
// --destructive. A sidecar counts only when it names the file's device and
// inode, is owned by this user and writable by it alone.
TEST_F(PrepareTargetTest, APlantedSidecarProvesNothing) {
  ASSERT_EQ(mkdir(dir_.File("ramfs").c_str(), 0700), 0);
  const std::string foreign = dir_.File("ramfs/foreign");
  const int code = InPrivateMount("ramfs", "", dir_.File("ramfs"), [&] {
    std::ofstream(foreign) << std::string(65536, 'F');
    const auto refused = [&] {
      auto target = PrepareTarget(FileJob(foreign, 0, RwMode::kWrite, false), {});
      return !target && target.error().message.find("--destructive") != std::string::npos;
    };
    // The old format: a bare number.
    std::ofstream(foreign + ".iowatch") << "65536\n";
    CHILD_CHECK(refused());
    // The right device and inode, but writable by others.
    struct stat file {};
    stat(foreign.c_str(), &file);
    std::ofstream(foreign + ".iowatch") << fmt::format("65536 {} {}\n", file.st_dev, file.st_ino);
    chmod((foreign + ".iowatch").c_str(), 0666);
    CHILD_CHECK(refused());
    // Another file's identity.
    chmod((foreign + ".iowatch").c_str(), 0600);
    std::ofstream(foreign + ".iowatch") << fmt::format("65536 {} {}\n", file.st_dev, 1);
    CHILD_CHECK(refused());
    // A symlink to a sidecar that would prove it.
    const std::string proof = dir_.File("ramfs/proof");
    std::ofstream(proof) << fmt::format("65536 {} {}\n", file.st_dev, file.st_ino);
    unlink((foreign + ".iowatch").c_str());
    CHILD_CHECK(symlink(proof.c_str(), (foreign + ".iowatch").c_str()) == 0);
    CHILD_CHECK(refused());
    std::ifstream content(foreign);
    CHILD_CHECK(std::string((std::istreambuf_iterator<char>(content)),
                            std::istreambuf_iterator<char>()) == std::string(65536, 'F'));
    return 0;
  });
  if (code == kSkipExit) GTEST_SKIP() << "cannot mount ramfs in a private mount namespace";
  EXPECT_EQ(code, 0);
}

// Adversarial test: the sidecar was opened O_CREAT|O_TRUNC and
// followed a symlink planted in its place, truncating its target even for a
// read-only job. It is now written beside and renamed over the link.
TEST_F(PrepareTargetTest, ASymlinkPlantedAsTheSidecarIsReplacedNotFollowed) {
  ASSERT_EQ(mkdir(dir_.File("ramfs").c_str(), 0700), 0);
  const std::string path = dir_.File("ramfs/probe");
  const std::string victim = dir_.File("victim");  // outside the ramfs
  std::ofstream(victim) << "precious";
  const int code = InPrivateMount("ramfs", "", dir_.File("ramfs"), [&] {
    CHILD_CHECK(symlink(victim.c_str(), (path + ".iowatch").c_str()) == 0);
    CHILD_CHECK(symlink(victim.c_str(), (path + ".iowatch.tmp").c_str()) == 0);
    auto created = PrepareTarget(FileJob(path, kMiB, RwMode::kRead, false), {});
    CHILD_CHECK(created && created->created);
    struct stat sidecar {};
    CHILD_CHECK(lstat((path + ".iowatch").c_str(), &sidecar) == 0 && S_ISREG(sidecar.st_mode));
    CHILD_CHECK(!Exists(path + ".iowatch.tmp"));
    return 0;
  });
  if (code == kSkipExit) GTEST_SKIP() << "cannot mount ramfs in a private mount namespace";
  EXPECT_EQ(code, 0);
  std::ifstream content(victim);
  std::string text;
  content >> text;
  EXPECT_EQ(text, "precious");
}

// Adversarial review: a SIGINT or a daemon shutdown during the
// first fill of a large file waited for the whole fill. The fill stops
// between two chunks; the file and its marker stay for the next run.
TEST_F(PrepareTargetTest, ACancelledFillStopsAndKeepsTheFileForTheNextRun) {
  const std::string path = dir_.File("cancelled");
  const std::atomic<bool> cancel{true};
  auto target = PrepareTarget(FileJob(path, 8 * kMiB, RwMode::kRead, false), {}, &cancel);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().os_errno, ECANCELED);
  EXPECT_EQ(target.error().ToString(),
            path +
                ": cancelled while laying out the file (0 of 8388608 bytes written; the next "
                "run goes on from there)");
  ASSERT_TRUE(Exists(path));
  EXPECT_EQ(GetXattr(path), "0");
  const std::atomic<bool> go_on{false};
  auto next = PrepareTarget(FileJob(path, 8 * kMiB, RwMode::kRead, false), {}, &go_on);
  ASSERT_TRUE(next) << next.error().ToString();
  EXPECT_FALSE(next->created);
  EXPECT_EQ(GetXattr(path), std::to_string(8 * kMiB));
}

// Adversarial test: `--filename=/sys/...` with --destructive
// attempted a write. Kernel interfaces are refused whatever the flags.
TEST_F(PrepareTargetTest, PseudoFilesystemsAreRefusedWhateverTheFlags) {
  const TargetPolicy everything{.allow_block_device = true, .destructive = true};
  const std::pair<std::string, std::string> cases[] = {
      {"/proc/self/status", "procfs"},
      {"/sys/kernel/uevent_seqnum", "sysfs"},
      {"/proc/iowatch-test-new-file", "procfs"},  // would be created: refused first
  };
  for (const auto& [path, fs] : cases) {
    auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kWrite, false), everything);
    ASSERT_FALSE(target) << path;
    EXPECT_EQ(target.error().ToString(),
              path + ": is on " + fs +
                  ", a kernel interface rather than storage; iowatch never probes it, whatever "
                  "the flags");
  }
}

// The probe file itself is never reached through a symlink: a link planted in
// its place is refused, whatever it points to, and what it points to is
// neither created nor written.
TEST_F(PrepareTargetTest, ASymlinkAsTheProbeFileIsRefused) {
  const std::string victim = dir_.File("victim");
  std::ofstream(victim) << std::string(kMiB, 'V');
  const std::string link = dir_.File("probe");
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);
  auto target = PrepareTarget(FileJob(link, kMiB, RwMode::kWrite, false), {.destructive = true});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().ToString(),
            link +
                ": is a symbolic link; iowatch opens probe files only by their own name (give "
                "the path it points to)");
  EXPECT_EQ(ReadBytes(victim, 0, 4), std::vector<char>(4, 'V'));
  // A dangling link is not created through either.
  const std::string dangling = dir_.File("dangling");
  ASSERT_EQ(symlink(dir_.File("nowhere").c_str(), dangling.c_str()), 0);
  EXPECT_FALSE(PrepareTarget(FileJob(dangling, kMiB, RwMode::kRead, false), {}));
  EXPECT_FALSE(Exists(dir_.File("nowhere")));
}

TEST_F(PrepareTargetTest, NoSpaceNamesTheAmountAndRemovesTheFile) {
  const std::string mnt = dir_.File("small");
  ASSERT_EQ(mkdir(mnt.c_str(), 0700), 0);
  const std::string path = mnt + "/probe";
  const int code = InPrivateMount("tmpfs", "size=1m", mnt, [&] {
    auto target = PrepareTarget(FileJob(path, 4 * kMiB, RwMode::kRead, false), {});
    CHILD_CHECK(!target);
    fprintf(stderr, "%s\n", target.error().ToString().c_str());
    CHILD_CHECK(target.error().os_errno == ENOSPC);
    CHILD_CHECK(target.error().message.find("no space left on " + mnt +
                                            " to lay out 4194304 "
                                            "bytes") != std::string::npos);
    CHILD_CHECK(!Exists(path));
    CHILD_CHECK(!Exists(path + ".iowatch"));
    // An own file that cannot grow keeps its size and marker.
    CHILD_CHECK(PrepareTarget(FileJob(path, 512 * 1024, RwMode::kRead, false), {}));
    CHILD_CHECK(!PrepareTarget(FileJob(path, 4 * kMiB, RwMode::kRead, false), {}));
    CHILD_CHECK(FileSize(path) == 512 * 1024);
    CHILD_CHECK(GetXattr(path) == "524288");
    return 0;
  });
  if (code == kSkipExit) GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace";
  EXPECT_EQ(code, 0);
}

// ---------------------------------------------------------------- block devices

class BlockDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    if (RunCommand("command -v losetup").empty()) GTEST_SKIP() << "losetup is not installed";
    backing_ = dir_.File("disk.img");
    { std::ofstream create(backing_); }
    ASSERT_EQ(truncate(backing_.c_str(), static_cast<off_t>(16 * kMiB)), 0);
    device_ = RunCommand("losetup -f --show " + backing_ + " 2>/dev/null");
    if (!device_.empty() && device_.back() == '\n') device_.pop_back();
    if (device_.rfind("/dev/loop", 0) != 0) {
      device_.clear();
      GTEST_SKIP() << "cannot attach a loop device (losetup -f failed)";
    }
  }
  void TearDown() override {
    if (!device_.empty()) RunCommand("losetup -d " + device_ + " 2>&1");
  }
  TempDir dir_;
  std::string backing_;
  std::string device_;
};

TEST_F(BlockDeviceTest, RefusedWithoutAllowBlockDevice) {
  auto target = PrepareTarget(FileJob(device_, 0, RwMode::kRead, true), {});
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().path, device_);
  EXPECT_NE(target.error().message.find("is a block device"), std::string::npos);
  EXPECT_NE(target.error().message.find("--allow-block-device"), std::string::npos);
}

TEST_F(BlockDeviceTest, ReadAllowedWithFlagWriteNeedsDestructive) {
  auto read =
      PrepareTarget(FileJob(device_, 0, RwMode::kRandRead, true), {.allow_block_device = true});
  ASSERT_TRUE(read) << read.error().ToString();
  struct stat st {};
  ASSERT_EQ(stat(device_.c_str(), &st), 0);
  EXPECT_TRUE(read->is_block_device);
  EXPECT_FALSE(read->created);
  EXPECT_EQ(read->device, st.st_rdev);
  EXPECT_EQ(read->region_size, 16 * kMiB);
  EXPECT_EQ(read->offset_alignment, 512u);
  EXPECT_EQ(fcntl(read->fd, F_GETFL) & O_ACCMODE, O_RDONLY);

  auto write =
      PrepareTarget(FileJob(device_, 0, RwMode::kWrite, true), {.allow_block_device = true});
  ASSERT_FALSE(write);
  EXPECT_NE(write.error().message.find("--destructive"), std::string::npos);
  EXPECT_NE(write.error().message.find("destroys"), std::string::npos);

  auto allowed = PrepareTarget(FileJob(device_, 4 * kMiB, RwMode::kWrite, true),
                               {.allow_block_device = true, .destructive = true});
  ASSERT_TRUE(allowed) << allowed.error().ToString();
  EXPECT_EQ(fcntl(allowed->fd, F_GETFL) & O_ACCMODE, O_RDWR);
  EXPECT_EQ(FileSize(backing_), 16 * kMiB);  // nothing laid out on a device

  JobSpec beyond = FileJob(device_, 16 * kMiB, RwMode::kRead, true);
  beyond.offset = 4096;
  auto too_big = PrepareTarget(beyond, {.allow_block_device = true});
  ASSERT_FALSE(too_big);
  EXPECT_NE(too_big.error().message.find("exceeds the size of this device"), std::string::npos);

  JobSpec misaligned = FileJob(device_, 0, RwMode::kRead, true);
  misaligned.block_size = 1000;
  auto bad = PrepareTarget(misaligned, {.allow_block_device = true});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("alignment 512 of this device"), std::string::npos);
}

// ---------------------------------------------------------------- engines

// Page-aligned I/O buffers, as the runner allocates them.
class Buffers {
 public:
  Buffers(size_t count, size_t bytes) {
    for (size_t i = 0; i < count; ++i) {
      auto* data = static_cast<std::byte*>(std::aligned_alloc(4096, bytes));
      owned_.emplace_back(data, &std::free);
      spans_.emplace_back(data, bytes);
    }
  }
  std::span<const std::span<std::byte>> spans() const { return spans_; }
  std::span<std::byte> operator[](size_t i) const { return spans_[i]; }

 private:
  std::vector<std::unique_ptr<std::byte, decltype(&std::free)>> owned_;
  std::vector<std::span<std::byte>> spans_;
};

// Opens an engine of `kind`, skipping when the kernel refuses io_uring.
std::unique_ptr<ProbeEngine> OpenEngine(EngineKind kind, int fd, const Buffers& buffers,
                                        uint32_t depth, std::string* skip) {
  auto engine = MakeEngine(kind);
  auto opened = engine->Open({fd, buffers.spans()}, depth);
  if (!opened) {
    if (opened.error().code == ErrorCode::kUnsupported)
      *skip = opened.error().ToString();
    else
      ADD_FAILURE() << opened.error().ToString();
    return nullptr;
  }
  return engine;
}

// Submits what is queued and reaps `count` completions, in tag order.
std::vector<IoCompletion> SubmitAndReapAll(ProbeEngine& engine, size_t count) {
  auto started = engine.Submit();
  EXPECT_TRUE(started);
  std::vector<IoCompletion> all;
  std::vector<IoCompletion> out(count);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
    auto n = engine.Reap(count - all.size(), out, std::chrono::seconds(1));
    EXPECT_TRUE(n) << n.error().ToString();
    if (!n) break;
    all.insert(all.end(), out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*n));
  }
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.tag < b.tag; });
  return all;
}

class EngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  TempDir dir_;
};

#define OPEN_ENGINE_OR_SKIP(var, fd, buffers, depth)                   \
  std::string skip_reason;                                             \
  auto var = OpenEngine(GetParam(), fd, buffers, depth, &skip_reason); \
  if (!skip_reason.empty()) GTEST_SKIP() << skip_reason;               \
  ASSERT_NE(var, nullptr)

TEST_P(EngineTest, WritesWithODirectAndReadsBack) {
  const std::string path = dir_.File("data");
  auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kRandReadWrite, true), {});
  ASSERT_TRUE(target) << target.error().ToString();
  constexpr size_t kCount = 8;
  constexpr uint32_t kBlock = 4096;
  Buffers buffers(2 * kCount, kBlock);
  OPEN_ENGINE_OR_SKIP(engine, target->fd, buffers, kCount);
  for (size_t i = 0; i < kCount; ++i) {
    for (size_t b = 0; b < kBlock; ++b) buffers[i][b] = static_cast<std::byte>((i * 31 + b) & 0xff);
    ASSERT_TRUE(engine->Queue({IoOp::kWrite, i * 3 * kBlock, kBlock, static_cast<uint32_t>(i), i}));
  }
  for (const IoCompletion& c : SubmitAndReapAll(*engine, kCount)) EXPECT_EQ(c.result, kBlock);

  for (size_t i = 0; i < kCount; ++i) {
    std::fill(buffers[kCount + i].begin(), buffers[kCount + i].end(), std::byte{0});
    ASSERT_TRUE(engine->Queue(
        {IoOp::kRead, i * 3 * kBlock, kBlock, static_cast<uint32_t>(kCount + i), 100 + i}));
  }
  const auto reads = SubmitAndReapAll(*engine, kCount);
  ASSERT_EQ(reads.size(), kCount);
  for (size_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(reads[i].tag, 100 + i);
    EXPECT_EQ(reads[i].result, kBlock);
    EXPECT_TRUE(std::equal(buffers[i].begin(), buffers[i].end(), buffers[kCount + i].begin()))
        << "block " << i;
    // And on disk, read independently of the engine.
    const auto on_disk = ReadBytes(path, i * 3 * kBlock, kBlock);
    EXPECT_EQ(std::memcmp(on_disk.data(), buffers[i].data(), kBlock), 0) << "block " << i;
  }
  engine->Close();
  engine->Close();  // twice is harmless
}

TEST_P(EngineTest, ShortReadAtEndOfFileIsReportedAsIs) {
  const std::string path = dir_.File("short");
  std::ofstream(path, std::ios::binary) << std::string(6000, 'x');
  auto target = PrepareTarget(FileJob(path, 0, RwMode::kRead, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  Buffers buffers(2, 4096);
  OPEN_ENGINE_OR_SKIP(engine, target->fd, buffers, 2);
  ASSERT_TRUE(engine->Queue({IoOp::kRead, 4096, 4096, 0, 1}));
  ASSERT_TRUE(engine->Queue({IoOp::kRead, 8192, 4096, 1, 2}));
  const auto done = SubmitAndReapAll(*engine, 2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].result, 6000 - 4096);
  EXPECT_EQ(done[1].result, 0);
}

TEST_P(EngineTest, ErrnoIsSurfacedAsNegativeResult) {
  const std::string path = dir_.File("wronly");
  std::ofstream(path) << std::string(8192, 'x');
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Buffers buffers(1, 4096);
  {
    OPEN_ENGINE_OR_SKIP(engine, fd, buffers, 1);
    ASSERT_TRUE(engine->Queue({IoOp::kRead, 0, 4096, 0, 7}));
    const auto done = SubmitAndReapAll(*engine, 1);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].tag, 7u);
    EXPECT_EQ(done[0].result, -EBADF);
  }
  close(fd);
}

TEST_P(EngineTest, FsyncCompletes) {
  const std::string path = dir_.File("fsync");
  auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kWrite, true), {});
  ASSERT_TRUE(target) << target.error().ToString();
  Buffers buffers(1, 4096);
  OPEN_ENGINE_OR_SKIP(engine, target->fd, buffers, 2);
  ASSERT_TRUE(engine->Queue({IoOp::kWrite, 0, 4096, 0, 1}));
  ASSERT_TRUE(engine->Queue({IoOp::kFsync, 0, 0, 0, 2}));
  const auto done = SubmitAndReapAll(*engine, 2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].result, 4096);
  EXPECT_EQ(done[1].result, 0);
}

TEST_P(EngineTest, QueueBeyondDepthIsAnErrorAndReapIsPromptWhenIdle) {
  const std::string path = dir_.File("depth");
  auto target = PrepareTarget(FileJob(path, kMiB, RwMode::kRead, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  Buffers buffers(2, 4096);
  OPEN_ENGINE_OR_SKIP(engine, target->fd, buffers, 2);
  std::vector<IoCompletion> out(4);
  const auto start = std::chrono::steady_clock::now();
  auto none = engine->Reap(1, out, std::chrono::seconds(2));
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));

  EXPECT_FALSE(engine->Queue({IoOp::kRead, 0, 4096, 5, 3}));  // no such buffer
  EXPECT_FALSE(engine->Queue({IoOp::kRead, 0, 8192, 0, 3}));  // larger than its buffer
  ASSERT_TRUE(engine->Queue({IoOp::kRead, 0, 4096, 0, 1}));
  ASSERT_TRUE(engine->Queue({IoOp::kRead, 4096, 4096, 1, 2}));
  EXPECT_FALSE(engine->Queue({IoOp::kRead, 8192, 4096, 0, 3}));  // depth reached
  EXPECT_EQ(SubmitAndReapAll(*engine, 2).size(), 2u);
  EXPECT_TRUE(engine->Queue({IoOp::kRead, 8192, 4096, 0, 3}));  // room again
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineTest,
                         ::testing::Values(EngineKind::kPsync, EngineKind::kIoUring,
                                           EngineKind::kLibaio),
                         [](const auto& param_info) {
                           return std::string(ToString(param_info.param));
                         });

TEST(MakeEngineTest, BuildsEachKind) {
  EXPECT_EQ(MakeEngine(EngineKind::kPsync)->Name(), "psync");
  EXPECT_TRUE(MakeEngine(EngineKind::kPsync)->IsSynchronous());
  EXPECT_EQ(MakeEngine(EngineKind::kIoUring)->Name(), "io_uring");
  EXPECT_FALSE(MakeEngine(EngineKind::kIoUring)->IsSynchronous());
  EXPECT_EQ(MakeEngine(EngineKind::kNull)->Name(), "null");
  EXPECT_EQ(MakeEngine(EngineKind::kLibaio)->Name(), "libaio");
  EXPECT_FALSE(MakeEngine(EngineKind::kLibaio)->IsSynchronous());
}

TEST(PsyncEngineTest, PerformsRequestsInOrder) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto target = PrepareTarget(FileJob(dir.File("order"), kMiB, RwMode::kRandReadWrite, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  Buffers buffers(2, 4096);
  std::fill(buffers[0].begin(), buffers[0].end(), std::byte{0x5a});
  PsyncEngine engine;
  ASSERT_TRUE(engine.Open({target->fd, buffers.spans()}, 4));
  ASSERT_TRUE(engine.Queue({IoOp::kWrite, 0, 4096, 0, 1}));
  ASSERT_TRUE(engine.Queue({IoOp::kRead, 0, 4096, 1, 2}));
  auto started = engine.Submit();
  ASSERT_TRUE(started);
  EXPECT_EQ(*started, 2u);
  std::vector<IoCompletion> out(1);  // reaped across two calls
  ASSERT_EQ(engine.Reap(0, out, {}).value(), 1u);
  EXPECT_EQ(out[0].tag, 1u);
  ASSERT_EQ(engine.Reap(0, out, {}).value(), 1u);
  EXPECT_EQ(out[0].tag, 2u);
  EXPECT_EQ(out[0].result, 4096);
  EXPECT_EQ(buffers[1][100], std::byte{0x5a});
}

class UringEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  TempDir dir_;
};

TEST_F(UringEngineTest, BatchOfEightSubmittedOnceReapedTogether) {
  auto target = PrepareTarget(FileJob(dir_.File("batch"), kMiB, RwMode::kRandRead, true), {});
  ASSERT_TRUE(target) << target.error().ToString();
  Buffers buffers(8, 4096);
  IoUringOptions registered;  // fio's fixedbufs and registerfiles
  registered.fixedbufs = true;
  registered.registerfiles = true;
  UringEngine engine(registered);
  auto opened = engine.Open({target->fd, buffers.spans()}, 8);
  if (!opened && opened.error().code == ErrorCode::kUnsupported) {
    GTEST_SKIP() << opened.error().ToString();
  }
  ASSERT_TRUE(opened) << opened.error().ToString();
  EXPECT_TRUE(engine.UsesFixedBuffers())
      << (engine.Fallbacks().empty() ? "" : engine.Fallbacks()[0].reason);
  EXPECT_TRUE(engine.UsesFixedFile());
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(engine.Queue({IoOp::kRead, i * 65536ull, 4096, i, 1000 + i}));
  }
  auto started = engine.Submit();
  ASSERT_TRUE(started) << started.error().ToString();
  EXPECT_EQ(*started, 8u);
  std::vector<IoCompletion> out(16);
  auto reaped = engine.Reap(8, out, std::chrono::seconds(10));
  ASSERT_TRUE(reaped) << reaped.error().ToString();
  ASSERT_EQ(*reaped, 8u);
  std::set<uint64_t> tags;
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i].result, 4096);
    tags.insert(out[i].tag);
  }
  EXPECT_EQ(tags.size(), 8u);
  EXPECT_EQ(*tags.begin(), 1000u);
  EXPECT_EQ(*tags.rbegin(), 1007u);
}

// A read from an empty pipe never completes: Reap must give up at the
// timeout, and Close must cancel the read rather than hang.
TEST_F(UringEngineTest, ReapTimesOutAndCloseCancelsWhatIsInFlight) {
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  Buffers buffers(1, 4096);
  UringEngine engine;
  auto opened = engine.Open({pipe_fds[0], buffers.spans()}, 2);
  if (!opened && opened.error().code == ErrorCode::kUnsupported) {
    GTEST_SKIP() << opened.error().ToString();
  }
  ASSERT_TRUE(opened) << opened.error().ToString();
  ASSERT_TRUE(engine.Queue({IoOp::kRead, 0, 4096, 0, 1}));
  ASSERT_TRUE(engine.Submit());
  std::vector<IoCompletion> out(2);
  const auto start = std::chrono::steady_clock::now();
  auto reaped = engine.Reap(1, out, std::chrono::milliseconds(100));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reaped) << reaped.error().ToString();
  EXPECT_EQ(*reaped, 0u);
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::seconds(2));
  // Queued but never submitted: must not reach the kernel as a read.
  ASSERT_TRUE(engine.Queue({IoOp::kRead, 0, 4096, 0, 2}));
  const auto closing = std::chrono::steady_clock::now();
  engine.Close();
  EXPECT_LT(std::chrono::steady_clock::now() - closing, std::chrono::seconds(2));
  // Nothing is left reading the pipe.
  ASSERT_EQ(write(pipe_fds[1], "abc", 3), 3);
  char back[3];
  ASSERT_EQ(read(pipe_fds[0], back, 3), 3);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

// Without CAP_IPC_LOCK, registered buffers count against RLIMIT_MEMLOCK;
// over it the engine must fall back to plain READ/WRITE, still work, and
// report the fallback (fio would fail the job).
TEST_F(UringEngineTest, FallsBackToUnregisteredBuffersOverMemlock) {
  auto target = PrepareTarget(FileJob(dir_.File("memlock"), kMiB, RwMode::kRead, false), {});
  ASSERT_TRUE(target) << target.error().ToString();
  const auto drop_ipc_lock_and_limit = [] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &header, data) != 0) return false;
    data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
    rlimit limit{64 * 1024, 64 * 1024};
    return syscall(SYS_capset, &header, data) == 0 && setrlimit(RLIMIT_MEMLOCK, &limit) == 0;
  };
  const int code = test::InChild(drop_ipc_lock_and_limit, [&]() -> int {
    Buffers buffers(4, kMiB / 4);
    IoUringOptions fixedbufs;
    fixedbufs.fixedbufs = true;
    UringEngine engine(fixedbufs);
    auto opened = engine.Open({target->fd, buffers.spans()}, 4);
    if (!opened) return kSkipExit;
    CHILD_CHECK(!engine.UsesFixedBuffers());
    CHILD_CHECK(engine.Fallbacks().size() == 1);
    fprintf(stderr, "%s\n", engine.Fallbacks()[0].reason.c_str());
    CHILD_CHECK(engine.Fallbacks()[0].name == "fixedbufs");
    CHILD_CHECK(engine.Fallbacks()[0].reason.find("RLIMIT_MEMLOCK") != std::string::npos);
    CHILD_CHECK(engine.Queue({IoOp::kRead, 0, 4096, 3, 9}));
    CHILD_CHECK(engine.Submit().value_or(0) == 1);
    std::vector<IoCompletion> out(1);
    CHILD_CHECK(engine.Reap(1, out, std::chrono::seconds(5)).value_or(0) == 1);
    CHILD_CHECK(out[0].tag == 9 && out[0].result == 4096);
    return 0;
  });
  if (code == kSkipExit) GTEST_SKIP() << "cannot drop CAP_IPC_LOCK or open io_uring";
  EXPECT_EQ(code, 0);
}

// A kernel (or seccomp policy) refusing io_uring_setup gives kUnsupported
// with the psync hint.
TEST_F(UringEngineTest, RefusedIoUringIsUnsupportedWithAHint) {
  const int code = test::InChild(
      [] { return test::DenySyscall(__NR_io_uring_setup, EPERM); },
      [] {
        Buffers buffers(1, 4096);
        UringEngine engine;
        auto opened = engine.Open({0, buffers.spans()}, 4);
        CHILD_CHECK(!opened);
        fprintf(stderr, "%s\n", opened.error().ToString().c_str());
        CHILD_CHECK(opened.error().code == ErrorCode::kUnsupported);
        CHILD_CHECK(opened.error().message.find("io_uring is not available") == 0);
        CHILD_CHECK(opened.error().message.find("--ioengine=psync") != std::string::npos);
        engine.Close();
        return 0;
      });
  if (code == kSkipExit) GTEST_SKIP() << "cannot install a seccomp filter";
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace iowatch::probes
