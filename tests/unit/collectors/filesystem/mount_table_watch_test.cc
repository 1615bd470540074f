// The mount table is read again when the kernel says it changed (a mount,
// a remount), every kMaxAge whatever it says, and every time where nothing
// can say (a fixture's regular file).
#include "collectors/filesystem/mount_table_watch.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

using std::chrono::seconds;

TEST(MountTableWatch, AFixturesFileIsReadEveryTime) {
  const iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const auto path = dir.path() / "mountinfo";
  std::ofstream(path) << "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
  MountTableWatch watch;
  EXPECT_TRUE(watch.Changed(path));
  EXPECT_TRUE(watch.Changed(path));
  EXPECT_TRUE(watch.Changed(path));
}

TEST(MountTableWatch, AnUnchangedProcTableIsReadAgainOnlyAfterItsMaxAge) {
  MountTableWatch watch;
  const auto t0 = MountTableWatch::Clock::now();
  EXPECT_TRUE(watch.Changed("/proc/self/mountinfo", t0));  // never read
  EXPECT_FALSE(watch.Changed("/proc/self/mountinfo", t0 + seconds(1)));
  EXPECT_TRUE(watch.Changed("/proc/self/mountinfo", t0 + MountTableWatch::kMaxAge));
  EXPECT_FALSE(watch.Changed("/proc/self/mountinfo", t0 + MountTableWatch::kMaxAge + seconds(1)));
  EXPECT_TRUE(watch.Changed("/proc/thread-self/mountinfo", t0));  // another table
}

// In a child with a mount namespace of its own: each step's result in one
// bit of the exit status (0: all as expected).
int WatchAMountAndARemount() {
  if (::unshare(CLONE_NEWNS) != 0) return 0x80;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 0x80;
  char dir[] = "/tmp/iowatch-watch-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return 0x80;
  int failed = 0;
  MountTableWatch watch;
  const auto t0 = MountTableWatch::Clock::now();
  const std::filesystem::path table = "/proc/self/mountinfo";
  if (!watch.Changed(table, t0)) failed |= 1;
  if (watch.Changed(table, t0)) failed |= 2;
  if (::mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0) failed |= 0x40;
  if (!watch.Changed(table, t0)) failed |= 4;  // mounted
  if (watch.Changed(table, t0)) failed |= 8;   // said once
  if (::mount(nullptr, dir, nullptr, MS_REMOUNT | MS_RDONLY, "size=64k") != 0) failed |= 0x40;
  if (!watch.Changed(table, t0)) failed |= 16;  // remounted read-only
  ::umount(dir);
  if (!watch.Changed(table, t0)) failed |= 32;  // unmounted
  ::rmdir(dir);
  return failed;
}

TEST(MountTableWatch, AMountARemountAndAnUnmountAreEachSaidOnce) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: a mount namespace of its own to mount in";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(WatchAMountAndARemount());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  const int failed = WEXITSTATUS(status);
  ASSERT_NE(failed & 0x80, 0x80) << "could not make a private mount namespace";
  ASSERT_EQ(failed & 0x40, 0) << "mount(2) of a tmpfs failed";
  EXPECT_EQ(failed & 1, 0) << "a table never read: changed";
  EXPECT_EQ(failed & 2, 0) << "nothing happened: unchanged";
  EXPECT_EQ(failed & 4, 0) << "a mount: changed";
  EXPECT_EQ(failed & 8, 0) << "the mount said twice";
  EXPECT_EQ(failed & 16, 0) << "a remount read-only: changed";
  EXPECT_EQ(failed & 32, 0) << "an unmount: changed";
}

}  // namespace
}  // namespace iowatch::collectors
