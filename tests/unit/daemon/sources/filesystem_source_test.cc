// A mount whose statvfs hangs (a stale NFS server, a FUSE daemon that does
// not answer) never delays a sample: it is asked once, marked, not asked
// again while its call is pending, and read again once the call returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "daemon/sources/filesystem/usage_asker.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A statvfs whose calls on `hung` block until Release(); others answer at once.
class HangingStatvfs {
 public:
  explicit HangingStatvfs(std::string hung) : hung_(std::move(hung)) {}
  ~HangingStatvfs() { Release(); }

  collectors::FilesystemUsageReader Reader() {
    return [this](const std::string& path) -> Result<collectors::FilesystemUsage> {
      ++calls_[path == hung_ ? 1 : 0];
      if (path == hung_) {
        std::unique_lock lock(mutex_);
        released_cv_.wait(lock, [this] { return released_; });
      }
      return collectors::FilesystemUsage{4096 * 1000, 4096 * 600, 4096 * 500, 100, 40};
    };
  }
  void Release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
  }
  int HungCalls() const { return calls_[1]; }

 private:
  std::string hung_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
  std::atomic<int> calls_[2] = {0, 0};
};

double SecondsSinceStart(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

TEST(UsageAsker, AHungMountIsAskedOnceAndTheOthersStillAnswer) {
  HangingStatvfs statvfs("/mnt/nfs");
  UsageAsker asker;
  const auto reader = statvfs.Reader();
  auto start = steady_clock::now();
  const UsageAsker::Answer hung = asker.Ask(reader, "/mnt/nfs", start + milliseconds(50));
  EXPECT_LT(SecondsSinceStart(start), 2.0);  // the deadline, with a wide margin for a busy machine
  EXPECT_TRUE(hung.stuck);
  ASSERT_FALSE(hung.usage.has_value());
  EXPECT_NE(hung.usage.error().ToString().find("/mnt/nfs"), std::string::npos);
  EXPECT_NE(hung.usage.error().ToString().find("did not answer in time"), std::string::npos);
  EXPECT_EQ(asker.Stuck(), 1u);

  // Asked again while pending: at once, without a second call.
  start = steady_clock::now();
  const UsageAsker::Answer again = asker.Ask(reader, "/mnt/nfs", start + milliseconds(2000));
  EXPECT_LT(SecondsSinceStart(start), 1.0);
  EXPECT_TRUE(again.stuck);
  EXPECT_EQ(statvfs.HungCalls(), 1);

  // Another mount answers, on a thread of its own.
  const UsageAsker::Answer other = asker.Ask(reader, "/", steady_clock::now() + milliseconds(5000));
  ASSERT_TRUE(other.usage.has_value());
  EXPECT_EQ(other.usage->size_bytes, 4096u * 1000);

  // Once the call returns, the mount is asked (and answers) again.
  statvfs.Release();
  UsageAsker::Answer back;
  for (int i = 0; i < 500 && asker.Stuck() > 0; ++i) {
    back = asker.Ask(reader, "/mnt/nfs", steady_clock::now() + milliseconds(5000));
    if (!back.stuck) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_FALSE(back.stuck);
  ASSERT_TRUE(back.usage.has_value());
  EXPECT_EQ(back.usage->avail_bytes, 4096u * 500);
  EXPECT_EQ(asker.Stuck(), 0u);
}

const FileTree kMountsProcfs(iowatch::testing::FixturesDir() + "/metrics-two-samples/s2/proc");
const FileTree kMountsSysfs(iowatch::testing::FixturesDir() + "/metrics-two-samples/s2/sys");

const FilesystemSeries* FindMount(const Snapshot& s, std::string_view mount_point) {
  const auto& series = s.filesystems.series;
  const auto it = std::ranges::find(series, mount_point, &FilesystemSeries::mount_point);
  return it == series.end() ? nullptr : &*it;
}

TEST(FilesystemSource, AHungMountNeverDelaysASample) {
  HangingStatvfs statvfs("/var/lib/data");
  SamplerOptions options;
  options.read_deadline_seconds = 1;  // serve's: half the interval
  options.filesystems.mount_timeout_seconds = 0.05;
  options.filesystems.read_usage = statvfs.Reader();
  Sampler sampler(options);

  auto start = steady_clock::now();
  auto snapshot = sampler.Collect(kMountsProcfs, kMountsSysfs, 1000);
  const double first = SecondsSinceStart(start);
  const auto status = std::ranges::find(snapshot->collectors, "filesystem", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_TRUE(status->success) << status->error;  // a stuck mount is the mount's error, not ours
  EXPECT_EQ(status->timeouts_total, 0u);          // the collector itself answered in time
  const FilesystemSeries* data = FindMount(*snapshot, "/var/lib/data");
  ASSERT_NE(data, nullptr);
  EXPECT_FALSE(data->usage.has_value());
  const FilesystemSeries* root = FindMount(*snapshot, "/");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->usage.has_value());
  EXPECT_EQ(snapshot->filesystems.stuck, 1u);

  start = steady_clock::now();
  snapshot = sampler.Collect(kMountsProcfs, kMountsSysfs, 1001);
  EXPECT_LT(SecondsSinceStart(start), first + 0.5);  // not waited for again
  EXPECT_EQ(statvfs.HungCalls(), 1);
  ASSERT_NE(FindMount(*snapshot, "/var/lib/data"), nullptr);
  EXPECT_FALSE(FindMount(*snapshot, "/var/lib/data")->usage.has_value());

  statvfs.Release();
  for (int i = 0; i < 200 && snapshot->filesystems.stuck > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    snapshot = sampler.Collect(kMountsProcfs, kMountsSysfs, 1002 + i);
  }
  EXPECT_EQ(snapshot->filesystems.stuck, 0u);
  ASSERT_NE(FindMount(*snapshot, "/var/lib/data"), nullptr);
  EXPECT_TRUE(FindMount(*snapshot, "/var/lib/data")->usage.has_value());
}

TEST(FilesystemSource, AnUnreadableMountTableFailsTheCollectorWithItsPath) {
  SamplerOptions options;
  options.filesystems.read_usage = [](const std::string&) -> Result<collectors::FilesystemUsage> {
    return collectors::FilesystemUsage{};
  };
  Sampler sampler(options);
  const FileTree empty(iowatch::testing::FixturesDir() + "/cciss/proc");  // no self/mountinfo
  const auto snapshot = sampler.Collect(empty, kMountsSysfs, 1000);
  const auto status = std::ranges::find(snapshot->collectors, "filesystem", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_FALSE(status->success);
  EXPECT_NE(status->error.find("self/mountinfo"), std::string::npos) << status->error;
  EXPECT_TRUE(snapshot->filesystems.series.empty());
}

}  // namespace
}  // namespace iowatch::daemon
