// A mount whose statvfs hangs (a stale NFS server, a FUSE daemon that does
// not answer) never delays a sample: it is asked once, marked, not asked
// again while its call is pending, and read again once the call returns.
#include "daemon/sources/filesystem/filesystem_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/mountinfo.h"
#include "daemon/sources/filesystem/usage_asker.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

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

TEST(UsageAsker, AHungMountIsAskedOnceAndTheMountsAfterItStillAnswer) {
  HangingStatvfs statvfs("/mnt/nfs");
  UsageAsker asker;
  const auto reader = collectors::OneByOne(statvfs.Reader());
  const std::vector<UsageAsker::Request> requests = {
      {"/boot", "ext4"}, {"/mnt/nfs", "nfs"}, {"/", "ext4"}};
  auto start = steady_clock::now();
  // Half a second each: the calls that answer do so well within it on a busy machine.
  auto answers = asker.AskAll(reader, requests, milliseconds(500), start + milliseconds(5000));
  EXPECT_LT(SecondsSinceStart(start), 4.0);  // the timeout, with a wide margin for a busy machine
  ASSERT_EQ(answers.size(), 3u);
  ASSERT_TRUE(answers[0].usage.has_value());  // before the hung one, in its batch
  const UsageAsker::Answer& hung = answers[1];
  EXPECT_TRUE(hung.stuck);
  ASSERT_FALSE(hung.usage.has_value());
  EXPECT_NE(hung.usage.error().ToString().find("/mnt/nfs"), std::string::npos);
  EXPECT_NE(hung.usage.error().ToString().find("did not answer in time"), std::string::npos);
  // After it: asked in another batch, on a thread of its own.
  ASSERT_TRUE(answers[2].reached);
  ASSERT_TRUE(answers[2].usage.has_value());
  EXPECT_EQ(answers[2].usage->size_bytes, 4096u * 1000);
  EXPECT_EQ(asker.Stuck(), 1u);

  // Asked again while its call is pending: answered at once, without a call.
  start = steady_clock::now();
  answers = asker.AskAll(reader, requests, milliseconds(2000), start + milliseconds(5000));
  EXPECT_LT(SecondsSinceStart(start), 1.0);
  EXPECT_TRUE(answers[1].stuck);
  EXPECT_TRUE(answers[0].usage.has_value());
  EXPECT_TRUE(answers[2].usage.has_value());
  EXPECT_EQ(statvfs.HungCalls(), 1);

  // Once the call returns, the mount is asked (and answers) again.
  statvfs.Release();
  UsageAsker::Answer back;
  for (int i = 0; i < 500 && asker.Stuck() > 0; ++i) {
    back = asker.AskAll(reader, std::span(requests).subspan(1, 1), milliseconds(5000),
                        steady_clock::now() + milliseconds(5000))[0];
    if (!back.stuck) break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_FALSE(back.stuck);
  ASSERT_TRUE(back.usage.has_value());
  EXPECT_EQ(back.usage->avail_bytes, 4096u * 500);
  EXPECT_EQ(asker.Stuck(), 0u);
}

TEST(UsageAsker, TheSamplesDeadlineLeavesTheCallPendingAndTheRestNotReached) {
  // The call outlives the test's wait: the reader shares the statvfs it calls.
  auto statvfs = std::make_shared<HangingStatvfs>("/slow");
  UsageAsker asker;
  const auto reader = collectors::OneByOne(
      [statvfs, read = statvfs->Reader()](const std::string& path) { return read(path); });
  const std::vector<UsageAsker::Request> requests = {
      {"/", "ext4"}, {"/slow", "nfs"}, {"/late", "ext4"}};
  const auto start = steady_clock::now();
  // A second for "/" to answer on a busy machine; the hung call then waits it out.
  const auto answers =
      asker.AskAll(reader, requests, milliseconds(60'000), start + milliseconds(1000));
  EXPECT_LT(SecondsSinceStart(start), 5.0);
  EXPECT_TRUE(answers[0].usage.has_value());
  EXPECT_TRUE(answers[1].pending);  // within its own timeout: not judged stuck
  EXPECT_FALSE(answers[1].stuck);
  EXPECT_FALSE(answers[2].reached);
  EXPECT_EQ(asker.Stuck(), 0u);
  statvfs->Release();
}

TEST(UsageAsker, ABatchThatAnswersPastTheDeadlineStopsThereAndMakesNoNewCall) {
  // 20,000 mounts that each answer in 2 ms: 40 s in all, where the sample
  // has a second.
  auto calls = std::make_shared<std::atomic<int>>(0);
  const auto reader =
      collectors::OneByOne([calls](const std::string&) -> Result<collectors::FilesystemUsage> {
        ++*calls;
        std::this_thread::sleep_for(milliseconds(2));
        return collectors::FilesystemUsage{4096, 0, 0, 1, 0};
      });
  std::vector<std::string> paths;
  std::vector<UsageAsker::Request> requests;
  for (int i = 0; i < 20'000; ++i) paths.push_back(fmt::format("/m/{}", i));
  for (const std::string& path : paths) requests.push_back({path, "tmpfs"});
  UsageAsker asker;
  const auto start = steady_clock::now();
  const auto answers =
      asker.AskAll(reader, requests, milliseconds(60'000), start + milliseconds(1000));
  const double took = SecondsSinceStart(start);
  EXPECT_LT(took, 5.0);  // the deadline, with a wide margin for a busy machine
  const auto answered = static_cast<size_t>(
      std::ranges::count_if(answers, [](const auto& a) { return a.usage.has_value(); }));
  EXPECT_GT(answered, 0u);
  EXPECT_LT(answered, requests.size() / 10);
  for (size_t i = 0; i < answered; ++i) EXPECT_TRUE(answers[i].usage.has_value()) << i;
  EXPECT_FALSE(answers.back().reached);
  // The job ends with the call it was making: at most one more.
  std::this_thread::sleep_for(milliseconds(300));
  const int after = calls->load();
  EXPECT_LE(static_cast<size_t>(after), answered + 1);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(calls->load(), after);
  // Nothing is left stuck: the next sample asks again from the first unanswered.
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
  SamplerOptions options = TestSamplerOptions();
  options.read_deadline_seconds = 1;  // serve's: half the interval
  options.settings.Set(kMountTimeout, std::chrono::milliseconds(50));
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
  SamplerOptions options = TestSamplerOptions();
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

// A procfs root holding `mountinfo` as self/mountinfo, and a sysfs root
// beside it (sys/), in a directory removed with the fixture.
class MountTree {
 public:
  explicit MountTree(const std::string& mountinfo) {
    std::filesystem::create_directories(dir_.path() / "proc/self");
    std::filesystem::create_directories(dir_.path() / "sys/block");
    Write("proc/self/mountinfo", mountinfo);
  }
  void Write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path path = dir_.path() / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  void Remove(const std::string& relative) const {
    std::filesystem::remove(dir_.path() / relative);
  }
  FileTree Procfs() const { return FileTree(dir_.path() / "proc"); }
  FileTree Sysfs() const { return FileTree(dir_.path() / "sys"); }

 private:
  iowatch::testing::TempDir dir_;
};

collectors::FilesystemUsageReader AnswerAtOnce() {
  return [](const std::string&) -> Result<collectors::FilesystemUsage> {
    return collectors::FilesystemUsage{4096 * 1000, 4096 * 600, 4096 * 500, 100, 40};
  };
}

const CollectorStatus& FilesystemStatus(const Snapshot& s) {
  const auto status = std::ranges::find(s.collectors, "filesystem", &CollectorStatus::name);
  EXPECT_NE(status, s.collectors.end());
  return *status;
}

constexpr char kRootLine[] = "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";

TEST(FilesystemSource, AMountTableLargerThanProcfsReadsCapIsReadWhole) {
  // 1,200 mounts with 3.8 KB paths: a 9 MB mountinfo, past the 4 MiB cap of
  // a whole-file procfs read, which lost every mount, / included.
  std::string text = kRootLine;
  const std::string long_dir = "/srv/" + std::string(3800, 'd');
  for (int i = 0; i < 1200; ++i) {
    text += fmt::format("{} 21 0:{} / {}/{} rw - tmpfs tmpfs rw\n", 100 + i, 100 + i, long_dir, i);
  }
  ASSERT_GT(text.size(), kMaxProcfsFileBytes);
  const MountTree tree(text);
  SamplerOptions options = TestSamplerOptions();
  options.filesystems.read_usage = AnswerAtOnce();
  Sampler sampler(options);
  const auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  const CollectorStatus& status = FilesystemStatus(*snapshot);
  EXPECT_TRUE(status.success) << status.error;
  EXPECT_EQ(status.parse_errors_total, 0u) << status.parse_error;
  EXPECT_EQ(snapshot->filesystems.series.size(), 1201u);
  const FilesystemSeries* root = FindMount(*snapshot, "/");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->usage.has_value());
  ASSERT_NE(FindMount(*snapshot, long_dir + "/1199"), nullptr);
}

TEST(ReadMountinfo, PastItsLimitTheFirstMountsAreKeptAndTheRestCounted) {
  std::string text = kRootLine;
  for (int i = 0; i < 100; ++i) {
    text += fmt::format("{} 21 0:{} / /m/{:03} rw - tmpfs tmpfs rw\n", 100 + i, 100 + i, i);
  }
  const MountTree tree(text);
  const auto table =
      collectors::ReadMountinfo(tree.Procfs(), "self/mountinfo", {.max_bytes = 4096});
  ASSERT_TRUE(table.has_value()) << table.error().ToString();
  ASSERT_GT(table->mounts.size(), 10u);
  ASSERT_LT(table->mounts.size(), 101u);
  EXPECT_EQ(table->mounts.front().mount_point, "/");
  ASSERT_EQ(table->skipped.size(), 1u);
  const std::string why = table->skipped.front().ToString();
  EXPECT_NE(why.find(fmt::format("self/mountinfo:{}", table->mounts.size() + 1)), std::string::npos)
      << why;
  EXPECT_NE(why.find(fmt::format("{} mounts not read", 101 - table->mounts.size())),
            std::string::npos)
      << why;
}

TEST(FilesystemSource, WhenASampleCannotReadEveryMountTheNextOnesReadTheRest) {
  // More mounts than one sample's deadline reads: each sample starts where
  // the last stopped, and a mount keeps its figures between its turns. They
  // appear after the first sample, which the sampler allows longer.
  std::string text = kRootLine;
  const MountTree tree(text);
  constexpr int kMounts = 100;
  for (int i = 0; i < kMounts; ++i) {
    text += fmt::format("{} 21 0:{} / /m/{:03} rw - tmpfs tmpfs rw\n", 100 + i, 100 + i, i);
  }
  SamplerOptions options = TestSamplerOptions();
  options.read_deadline_seconds = 0.05;  // 30 ms of statvfs per sample
  options.filesystems.read_usage = [](const std::string&) -> Result<collectors::FilesystemUsage> {
    std::this_thread::sleep_for(milliseconds(2));
    return collectors::FilesystemUsage{4096, 4096, 4096, 1, 1};
  };
  Sampler sampler(options);
  ASSERT_EQ(sampler.Collect(tree.Procfs(), tree.Sysfs(), 999)->filesystems.series.size(), 1u);
  tree.Write("proc/self/mountinfo", text);
  size_t read = 0;
  int samples = 0;
  for (; samples < 300 && read < kMounts + 1; ++samples) {
    const auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000 + samples);
    const size_t now_read = static_cast<size_t>(
        std::ranges::count_if(snapshot->filesystems.series,
                              [](const FilesystemSeries& f) { return f.usage.has_value(); }));
    EXPECT_GE(now_read, read) << "sample " << samples << ": a mount lost its figures";
    read = now_read;
  }
  EXPECT_EQ(read, kMounts + 1u) << "after " << samples << " samples";
  EXPECT_GT(samples, 1);  // the deadline did cut the first sample short
}

TEST(FilesystemSource, TheFirstSampleReadsEveryMountItsLongerDeadlineAllows) {
  // The first sample waits longer than the others (it walks sysfs whole):
  // its mounts are read then, not left without figures for the first scrapes.
  std::string text = kRootLine;
  constexpr int kMounts = 100;
  for (int i = 0; i < kMounts; ++i) {
    text += fmt::format("{} 21 0:{} / /m/{:03} rw - tmpfs tmpfs rw\n", 100 + i, 100 + i, i);
  }
  const MountTree tree(text);
  SamplerOptions options = TestSamplerOptions();
  options.read_deadline_seconds = 0.05;  // 30 ms of statvfs a sample after the first
  options.filesystems.read_usage = [](const std::string&) -> Result<collectors::FilesystemUsage> {
    std::this_thread::sleep_for(milliseconds(2));
    return collectors::FilesystemUsage{4096, 4096, 4096, 1, 1};
  };
  Sampler sampler(options);
  const auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  EXPECT_TRUE(FilesystemStatus(*snapshot).success) << FilesystemStatus(*snapshot).error;
  EXPECT_EQ(std::ranges::count_if(snapshot->filesystems.series,
                                  [](const FilesystemSeries& f) { return f.usage.has_value(); }),
            kMounts + 1);
}

TEST(FilesystemSource, StuckFuseMountsNeverStarveAMountOfAnotherKind) {
  // Any user can mount FUSE (fusermount3) and make it hang: past the stuck
  // calls kept, the tmpfs mounted after them is still asked.
  std::string text = kRootLine;
  for (size_t i = 0; i < UsageAsker::kMaxStuck + 2; ++i) {
    text += fmt::format("{} 21 0:{} / /fuse/{} rw - fuse.stuck stuck rw,user_id=1000\n", 100 + i,
                        100 + i, i);
  }
  text += "200 21 0:200 / /late rw - tmpfs tmpfs rw\n";
  const MountTree tree(text);
  // The FUSE calls hang until released; their threads may outlive the test.
  auto fuse = std::make_shared<HangingStatvfs>("");
  const auto hanging = fuse->Reader();
  SamplerOptions options = TestSamplerOptions();
  options.settings.Set(kMountTimeout, std::chrono::milliseconds(20));
  options.filesystems.read_usage = [fuse, hanging](const std::string& path) {
    return path.starts_with("/fuse/") ? hanging("") : AnswerAtOnce()(path);
  };
  Sampler sampler(options);
  std::shared_ptr<const Snapshot> snapshot;
  for (int i = 0; i < 3; ++i) snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000 + i);
  fuse->Release();
  EXPECT_EQ(snapshot->filesystems.stuck, UsageAsker::kMaxStuck);
  const FilesystemSeries* late = FindMount(*snapshot, "/late");
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(late->usage.has_value());
  const FilesystemSeries* last_fuse =
      FindMount(*snapshot, fmt::format("/fuse/{}", UsageAsker::kMaxStuck + 1));
  ASSERT_NE(last_fuse, nullptr);
  EXPECT_FALSE(last_fuse->usage.has_value());  // its pool is full: not asked
}

TEST(FilesystemSource, BtrfsErrorsAreFoundByTheSourcesDeviceNumber) {
  // The source is a device-mapper link; /sys/fs/btrfs/<fsid>/devices lists
  // the kernel name, dm-0. The fsid is looked up once, when the mount appears.
  const MountTree tree(std::string(kRootLine) +
                       "40 21 0:45 / /data rw - btrfs /dev/mapper/vg0-data "
                       "rw,space_cache=v2,subvolid=5,subvol=/\n");
  const std::string fsid = "fsid-0f8d";
  tree.Write("sys/block/dm-0/dev", "253:0\n");
  tree.Write("sys/block/dm-0/dm/name", "vg0-data\n");
  tree.Write(fmt::format("sys/fs/btrfs/{}/devices/dm-0", fsid), "");
  tree.Write(fmt::format("sys/fs/btrfs/{}/devinfo/1/error_stats", fsid),
             "write_errs 3\nread_errs 7\nflush_errs 0\ncorruption_errs 1\ngeneration_errs 0\n");
  SamplerOptions options = TestSamplerOptions();
  options.filesystems.read_usage = AnswerAtOnce();
  int stat_calls = 0;
  options.filesystems.device_of =
      [&](const std::string& path) -> Result<collectors::BlockDeviceNumber> {
    ++stat_calls;
    if (path == "/dev/mapper/vg0-data") return collectors::BlockDeviceNumber{253, 0};
    return MakeError(ErrorCode::kNotFound, "no such device", path);
  };
  Sampler sampler(options);
  auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  const FilesystemSeries* data = FindMount(*snapshot, "/data");
  ASSERT_NE(data, nullptr);
  ASSERT_EQ(data->btrfs_errors.size(), 1u);
  EXPECT_EQ(data->btrfs_errors[0].devid, "1");
  EXPECT_EQ(data->btrfs_errors[0].counts[1], 7u);  // read

  // Not looked up again: the fsid is kept while the mount is.
  tree.Remove(fmt::format("sys/fs/btrfs/{}/devices/dm-0", fsid));
  snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1001);
  data = FindMount(*snapshot, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->btrfs_errors.size(), 1u);
  EXPECT_EQ(stat_calls, 1);
}

TEST(FilesystemSource, MountPointsThatDifferInInvalidBytesAreDistinctLabels) {
  const MountTree tree(std::string(kRootLine) +
                       "40 21 0:45 / /m/x\xff rw - tmpfs tmpfs rw\n"
                       "41 21 0:46 / /m/x\xfe rw - tmpfs tmpfs rw\n"
                       "42 21 0:47 / /m/y rw - tmpfs tmpfs rw,size=1024k\n"
                       "43 42 0:48 / /m/y rw - tmpfs tmpfs rw,size=2048k\n");
  SamplerOptions options = TestSamplerOptions();
  options.filesystems.read_usage = AnswerAtOnce();
  Sampler sampler(options);
  const auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  std::vector<std::string> labels;
  for (const FilesystemSeries& f : snapshot->filesystems.series) {
    labels.push_back(f.device + " " + f.fstype + " " + f.mount_point);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"/dev/sda1 ext4 /", "tmpfs tmpfs /m/x\\377",
                                              "tmpfs tmpfs /m/x\\376", "tmpfs tmpfs /m/y"}));
  EXPECT_EQ(snapshot->filesystems.series.back().major, 0u);
  EXPECT_EQ(snapshot->filesystems.series.back().minor, 48u);  // the top of the stack
}

TEST(FilesystemSource, AnUnchangedMountTableIsReusedAndEveryChangeIsSeenInTheNextSample) {
  // The table is parsed and its filesystems chosen only when its text
  // changes (36,000 mounts take most of a sample to parse); what is read
  // every sample (usage, ext4's error counts) is read every sample still.
  const std::string table = std::string(kRootLine) +
                            "40 21 8:16 / /data rw - ext4 /dev/sdb rw,errors=remount-ro\n"
                            "not a mount line\n";
  const MountTree tree(table);
  tree.Write("sys/block/sdb/dev", "8:16\n");
  const auto write_errors = [&](int count) {
    tree.Write("sys/fs/ext4/sdb/errors_count", fmt::format("{}\n", count));
    tree.Write("sys/fs/ext4/sdb/first_error_time", "0\n");
    tree.Write("sys/fs/ext4/sdb/last_error_time", "0\n");
  };
  write_errors(0);
  SamplerOptions options = TestSamplerOptions();
  uint64_t free_blocks = 100;
  options.filesystems.read_usage = [&](const std::string&) -> Result<collectors::FilesystemUsage> {
    return collectors::FilesystemUsage{4096 * 1000, 4096 * free_blocks, 4096 * free_blocks, 100,
                                       40};
  };
  Sampler sampler(options);
  auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  const FilesystemSeries* data = FindMount(*snapshot, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_FALSE(data->readonly);
  ASSERT_TRUE(data->ext4_errors.has_value());
  EXPECT_EQ(data->ext4_errors->count, 0u);
  EXPECT_EQ(FilesystemStatus(*snapshot).parse_errors_total, 1u);

  // The same table: new usage and error counts, the malformed line counted again.
  free_blocks = 50;
  write_errors(3);
  snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1001);
  data = FindMount(*snapshot, "/data");
  ASSERT_NE(data, nullptr);
  ASSERT_TRUE(data->usage.has_value());
  EXPECT_EQ(data->usage->free_bytes, 4096u * 50);
  ASSERT_TRUE(data->ext4_errors.has_value());
  EXPECT_EQ(data->ext4_errors->count, 3u);
  const CollectorStatus& status = FilesystemStatus(*snapshot);
  EXPECT_EQ(status.parse_errors_total, 2u);
  EXPECT_NE(status.parse_error.find("self/mountinfo:3"), std::string::npos) << status.parse_error;

  // errors=remount-ro: only the superblock's options change, one word.
  tree.Write("proc/self/mountinfo",
             std::string(kRootLine) +
                 "40 21 8:16 / /data rw - ext4 /dev/sdb ro,errors=remount-ro\n"
                 "41 21 0:50 / /new rw - tmpfs tmpfs rw\n");
  snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1002);
  data = FindMount(*snapshot, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(data->readonly);
  EXPECT_TRUE(data->usage.has_value());  // kept across the table's change
  EXPECT_NE(FindMount(*snapshot, "/new"), nullptr);
  EXPECT_EQ(FilesystemStatus(*snapshot).parse_errors_total, 2u);

  // Unmounted: gone in the next sample.
  tree.Write("proc/self/mountinfo", kRootLine);
  snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1003);
  EXPECT_EQ(FindMount(*snapshot, "/data"), nullptr);
  EXPECT_EQ(FindMount(*snapshot, "/new"), nullptr);
  EXPECT_EQ(snapshot->filesystems.series.size(), 1u);
}

TEST(FilesystemSource, NewOptionsChooseAgainFromAnUnchangedTable) {
  const MountTree tree(std::string(kRootLine) + "40 21 0:45 / /scratch rw - tmpfs tmpfs rw\n");
  SamplerOptions options = TestSamplerOptions();
  options.filesystems.read_usage = AnswerAtOnce();
  Sampler sampler(options);
  auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  EXPECT_NE(FindMount(*snapshot, "/scratch"), nullptr);
  options.settings.Set(kFsTypesExclude, std::string());
  options.settings.Set(kMountPointsExclude, std::string("^/scratch$"));
  sampler.Reconfigure(options);
  snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1001);
  EXPECT_EQ(FindMount(*snapshot, "/scratch"), nullptr);
  EXPECT_NE(FindMount(*snapshot, "/"), nullptr);
}

// A pattern that does not compile (the config's reader refuses one; this is
// the source's own guard) fails the collector with the pattern's error and
// selects nothing from a table it cannot filter.
TEST(FilesystemSource, APatternThatDoesNotCompileFailsTheCollectorNamingIt) {
  const MountTree tree{std::string(kRootLine)};
  SamplerOptions options = TestSamplerOptions();
  options.filesystems.read_usage = AnswerAtOnce();
  options.settings.Set(kMountPointsExclude, std::string("(unclosed"));
  Sampler sampler(options);
  const auto snapshot = sampler.Collect(tree.Procfs(), tree.Sysfs(), 1000);
  const CollectorStatus& status = FilesystemStatus(*snapshot);
  EXPECT_FALSE(status.success);
  EXPECT_NE(status.error.find("(unclosed"), std::string::npos) << status.error;
  EXPECT_TRUE(snapshot->filesystems.series.empty());
}

}  // namespace
}  // namespace iowatch::daemon
