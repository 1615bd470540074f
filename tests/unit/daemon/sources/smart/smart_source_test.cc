// The SMART source on the metrics fixture's disks (sda, sdb, sdc, nvme0n1,
// dm-0, verylongdevicename0) with a smartctl that answers from
// tests/fixtures/smart/ (fake-smartctl.sh): each disk's report arrives on a
// later sample than the one that started its run, a disk whose smartctl never
// answers (sdc) delays no sample and is killed at the timeout, dm-0 is never
// asked, and a disk without SMART says why.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "daemon/sources/filesystem/filesystem_source.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

const std::string kTree = iowatch::testing::FixturesDir() + "/metrics-two-samples/s2";

const SmartSeries* Find(const Snapshot& s, std::string_view device) {
  const auto it = std::ranges::find(s.smart.devices, device, &SmartSeries::device);
  return it == s.smart.devices.end() ? nullptr : &*it;
}

SamplerOptions Options() {
  SamplerOptions o = TestSamplerOptions();
  o.settings.Set(kFilesystemEnabled, false);
  o.settings.Set(kSmartEnabled, true);
  o.settings.Set(kSmartTimeout, std::chrono::milliseconds(1000));
  o.smart.command = {"sh", iowatch::testing::FixturesDir() + "/smart/fake-smartctl.sh"};
  o.filter = *collectors::DeviceFilter::Create("", "^(loop|ram|zram|fd)\\d+$");
  return o;
}

TEST(SmartSource, ReportsArriveWithoutWaitingAndAHungDiskIsKilledAtTheTimeout) {
  Sampler sampler(Options());
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  auto start = std::chrono::steady_clock::now();
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  double worst = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0;
       i < 300 && (Find(*snapshot, "sda") == nullptr || Find(*snapshot, "sdc") == nullptr); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    start = std::chrono::steady_clock::now();
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
    worst = std::max(
        worst, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  EXPECT_LT(worst, 0.5);  // no sample waited for smartctl, the hung one included

  const SmartSeries* sda = Find(*snapshot, "sda");
  ASSERT_NE(sda, nullptr);
  EXPECT_TRUE(sda->error.empty()) << sda->error;
  ASSERT_TRUE(sda->report.has_value());
  EXPECT_EQ(sda->report->model, "WDC WD40EFRX-68N32N0");
  ASSERT_NE(Find(*snapshot, "nvme0n1"), nullptr);
  EXPECT_EQ(Find(*snapshot, "nvme0n1")->report->nvme->unsafe_shutdowns, 17u);
  ASSERT_NE(Find(*snapshot, "sdb"), nullptr);
  EXPECT_EQ(Find(*snapshot, "sdb")->report->scsi.grown_defects, 12u);
  EXPECT_EQ(Find(*snapshot, "dm-0"), nullptr);  // a dm device has no SMART of its own

  const SmartSeries* hung = Find(*snapshot, "sdc");
  ASSERT_NE(hung, nullptr);
  EXPECT_NE(hung->error.find("did not answer within 1 s: killed"), std::string::npos)
      << hung->error;
  const SmartSeries* none = Find(*snapshot, "verylongdevicename0");
  ASSERT_NE(none, nullptr);
  EXPECT_NE(none->error.find("Unable to detect device type"), std::string::npos) << none->error;

  const auto status = std::ranges::find(snapshot->collectors, "smart", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_TRUE(status->success);  // some disks gave their health
}

// Children of this process, from /proc (the runs smartctl is started as).
size_t Children() {
  size_t n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid = 0; children >> pid;) ++n;
  }
  return n;
}

TEST(SmartSource, AtMostFourRunsAtOnceAndEveryDiskHasItsTurn) {
  SamplerOptions o = Options();
  // Every run takes 0.3 s, then answers as the fixture does (sdc never).
  o.settings.Set(kSmartTimeout, std::chrono::milliseconds(5000));
  o.smart.command = {
      "sh", "-c",
      "sleep 0.3; exec sh " + iowatch::testing::FixturesDir() + "/smart/fake-smartctl.sh \"$@\"",
      "smartctl"};
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  const size_t before = Children();
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  EXPECT_EQ(Children() - before, 4u);  // five disks may have SMART: four started
  size_t most = 4;
  for (int i = 0; i < 100 && Find(*snapshot, "verylongdevicename0") == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
    most = std::max(most, Children() - before);
  }
  EXPECT_EQ(most, 4u);
  for (const char* disk : {"sda", "sdb", "nvme0n1", "verylongdevicename0"}) {
    EXPECT_NE(Find(*snapshot, disk), nullptr) << disk;  // the fifth had its turn
  }
}

// A disk smartctl has no SMART for is asked once; the others every interval.
TEST(SmartSource, ADiskWithoutSmartIsNotAskedAgain) {
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / ("iowatch-smart-asked-" + std::to_string(getpid()));
  std::filesystem::remove(log);
  SamplerOptions o = Options();
  o.settings.Set(kSmartInterval, std::chrono::milliseconds(100));
  o.smart.command = {"sh", "-c",
                     "echo \"${@:-}\" | awk '{print $NF}' >> " + log.string() + "; exec sh " +
                         iowatch::testing::FixturesDir() + "/smart/fake-smartctl.sh \"$@\"",
                     "smartctl"};
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  for (int i = 0; i < 60; ++i) {
    const auto snapshot = sampler.Collect(procfs, sysfs, 1000 + i);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::map<std::string, int> asked;
  std::ifstream in(log);
  for (std::string device; in >> device;) ++asked[device];
  std::filesystem::remove(log);
  EXPECT_EQ(asked["/dev/verylongdevicename0"], 1);  // virtio-like: "Unable to detect device type"
  EXPECT_GE(asked["/dev/sda"], 3);                  // asked every 0.1 s of the 1.5 s
}

// The first runs of a host's first 16 disks start at once; the others'
// spread over the interval, each name always at the same place.
TEST(FirstSmartRunDelay, TheFirstDisksAtOnceTheOthersSpreadOverTheInterval) {
  EXPECT_EQ(FirstSmartRunDelay("sda", 0, 600), 0);
  EXPECT_EQ(FirstSmartRunDelay("sdp", kSmartImmediateDisks - 1, 600), 0);
  EXPECT_EQ(FirstSmartRunDelay("sdq", 16, 600), FirstSmartRunDelay("sdq", 900, 600));
  std::vector<int> tenths(10);
  for (int i = 0; i < 1000; ++i) {
    const double delay = FirstSmartRunDelay(fmt::format("disk{}", i), 16 + i, 600);
    ASSERT_GE(delay, 0);
    ASSERT_LT(delay, 600);
    ++tenths[static_cast<size_t>(delay / 60)];
  }
  for (const int n : tenths) {
    EXPECT_GE(n, 70);  // 100 each, evenly
    EXPECT_LE(n, 130);
  }
}

TEST(SmartSource, NoDiskWithHealthFailsTheCollectorWithTheCause) {
  SamplerOptions o = Options();
  o.smart.command = {"/nonexistent/smartctl"};
  Sampler sampler(o);
  const auto snapshot = sampler.Collect(FileTree(kTree + "/proc"), FileTree(kTree + "/sys"), 1000);
  const auto status = std::ranges::find(snapshot->collectors, "smart", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_FALSE(status->success);
  EXPECT_NE(status->error.find("/nonexistent/smartctl"), std::string::npos) << status->error;
}

// A process's state letter from /proc/PID/stat ('D' uninterruptible, 'Z'
// zombie); '-' when there is no such process.
char StateOf(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '-';
  const size_t paren = line.rfind(')');
  return paren + 2 < line.size() ? line[paren + 2] : '?';
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A smartctl whose disks' fates a shell case decides: `hang` runs for the
// disks it matches (a case pattern of device names), the fixture's answer for
// the others. $dev is the disk's name.
std::vector<std::string> Fake(const std::string& pattern, const std::string& hang) {
  return {"sh", "-c",
          "dev=$(basename \"$(eval echo \\${$#})\"); case $dev in " + pattern + ") " + hang +
              ";; *) exec sh " + iowatch::testing::FixturesDir() +
              "/smart/fake-smartctl.sh \"$@\";; esac",
          "smartctl"};
}

TEST(SmartSource, ARunKilledAtTheTimeoutTakesItsChildrenWithIt) {
  const std::string dir = ::testing::TempDir() + "smart-grandchildren-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  SamplerOptions o = Options();
  o.settings.Set(kSmartTimeout, std::chrono::milliseconds(1000));
  // Each hung smartctl leaves a child of its own (a helper it started), and
  // writes that child's pid to DIR/<disk>.
  o.smart.command = Fake("sda|sdb|sdc", "sleep 600 & echo $! > " + dir + "/$dev; exec sleep 600");
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  const auto killed = [&](const char* disk) {
    const SmartSeries* s = Find(*snapshot, disk);
    return s != nullptr && s->error.find("killed") != std::string::npos;
  };
  for (int i = 0; i < 200 && !(killed("sda") && killed("sdb") && killed("sdc")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
  }
  ASSERT_TRUE(killed("sda") && killed("sdb") && killed("sdc"));
  std::vector<pid_t> children;
  for (const char* disk : {"sda", "sdb", "sdc"}) {
    for (const std::string& line : Lines(dir + "/" + disk)) children.push_back(std::stoi(line));
  }
  ASSERT_EQ(children.size(), 3u);
  // SIGKILL to the group is delivered at once; the orphans are init's to reap.
  for (int i = 0; i < 100; ++i) {
    if (std::ranges::all_of(children,
                            [](pid_t p) { return StateOf(p) == '-' || StateOf(p) == 'Z'; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const pid_t child : children) {
    const char state = StateOf(child);
    EXPECT_TRUE(state == '-' || state == 'Z')
        << "pid " << child << " outlived its smartctl, state " << state;
    if (state != '-' && state != 'Z') ::kill(child, SIGKILL);
  }
  std::filesystem::remove_all(dir);
}

// A FUSE mount whose server (a thread here) answers INIT and then reads every
// request without answering it: a process that touches a file under it waits
// in the kernel, uninterruptible (fuse waits out a request userspace has
// read), SIGKILL or not, as smartctl does in an SG_IO ioctl on a hung disk.
// Release() closes the device: the connection is aborted, the waits end.
class HungFuse {
 public:
  bool Mount(std::string& why) {
    RemoveOnesLeftByKilledRuns();
    dir_ = ::testing::TempDir() + "smart-hung-" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    fd_ = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      why = "/dev/fuse: " + std::string(strerror(errno));
      return false;
    }
    const std::string options =
        "fd=" + std::to_string(fd_) + ",rootmode=40000,user_id=0,group_id=0";
    if (::mount("iowatch-test", dir_.c_str(), "fuse", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      why = "mount fuse on " + dir_ + ": " + strerror(errno);
      return false;
    }
    mounted_ = true;
    server_ = std::thread([this] { Serve(); });
    return true;
  }
  void Release() {
    stop_ = true;
    if (server_.joinable()) server_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  ~HungFuse() {
    Release();
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    std::filesystem::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }

 private:
  // A run killed before its destructor (a CI timeout, a session's end) leaves
  // its mount behind: unmounted here when its process is gone.
  static void RemoveOnesLeftByKilledRuns() {
    const std::string prefix = ::testing::TempDir() + "smart-hung-";
    std::ifstream mounts("/proc/self/mounts");
    std::string source, point, rest;
    while (mounts >> source >> point && std::getline(mounts, rest)) {
      if (!point.starts_with(prefix)) continue;
      const pid_t owner = std::atoi(point.c_str() + prefix.size());
      if (owner <= 0 || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
      ::umount2(point.c_str(), MNT_DETACH);
      std::filesystem::remove_all(point);
      std::filesystem::remove(point + ".starts");
    }
  }

  void Serve() {
    std::vector<char> buffer(1 << 20);
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
      if (n < static_cast<ssize_t>(sizeof(fuse_in_header))) continue;
      fuse_in_header in{};
      std::memcpy(&in, buffer.data(), sizeof in);
      if (in.opcode != FUSE_INIT) continue;  // read, never answered
      struct {
        fuse_out_header header;
        fuse_init_out init;
      } reply{};
      reply.header.len = sizeof reply;
      reply.header.unique = in.unique;
      reply.init.major = FUSE_KERNEL_VERSION;
      reply.init.minor = FUSE_KERNEL_MINOR_VERSION;
      reply.init.max_write = 4096;
      if (::write(fd_, &reply, sizeof reply) != static_cast<ssize_t>(sizeof reply)) return;
    }
  }

  std::string dir_;
  int fd_ = -1;
  bool mounted_ = false;
  std::atomic<bool> stop_ = false;
  std::thread server_;
};

TEST(SmartSource, ARunStuckInTheKernelIsKeptCountedAndReapedWithoutBlockingTheSampler) {
  if (::geteuid() != 0) GTEST_SKIP() << "a FUSE mount takes root";
  HungFuse fuse;
  std::string why;
  if (!fuse.Mount(why)) GTEST_SKIP() << why;
  const std::string starts = fuse.dir() + ".starts";
  // Removed after the sampler is gone: a run it started last may still note its start.
  struct RemovedAtTheEnd {
    std::string path;
    ~RemovedAtTheEnd() { std::filesystem::remove(path); }
  } remove_starts{starts};
  SamplerOptions o = Options();
  o.settings.Set(kSmartTimeout, std::chrono::milliseconds(1000));
  o.settings.Set(kSmartInterval, std::chrono::milliseconds(
                                     50));  // a disk is asked again as soon as its last run is over
  // Four disks hang in the kernel (each start noted); the fifth answers.
  o.smart.command =
      Fake("sda|sdb|sdc|nvme0n1", "echo $dev >> " + starts + "; exec stat " + fuse.dir() + "/$dev");
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  double slowest = 0;
  const auto collect = [&](double n) {
    const auto start = std::chrono::steady_clock::now();
    auto s = sampler.Collect(procfs, sysfs, n);
    slowest = std::max(
        slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return s;
  };
  auto snapshot = collect(1000);
  for (int i = 0; i < 150; ++i) {  // 3 s: three timeouts' worth
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = collect(1001 + i);
  }
  // One run per hung disk, killed and still alive: none started beside it, and
  // the four count against the limit, so the fifth disk has not had its turn.
  std::vector<std::string> started = Lines(starts);
  std::ranges::sort(started);
  EXPECT_EQ(started, (std::vector<std::string>{"nvme0n1", "sda", "sdb", "sdc"}));
  EXPECT_EQ(Find(*snapshot, "verylongdevicename0"), nullptr);
  const SmartSeries* sdc = Find(*snapshot, "sdc");
  ASSERT_NE(sdc, nullptr);
  EXPECT_NE(sdc->error.find("has not died yet"), std::string::npos) << sdc->error;
  const size_t pid_at = sdc->error.find("(pid ");
  ASSERT_NE(pid_at, std::string::npos) << sdc->error;
  const pid_t stuck = std::stoi(sdc->error.substr(pid_at + 5));
  EXPECT_EQ(StateOf(stuck), 'D');
  // No sample waited for a killed run to die: waiting 100 ms per kill (the
  // four time out in one sample) would take 0.4 s; a busy machine's sample 0.1.
  EXPECT_LT(slowest, 0.3);

  fuse.Release();  // the disk answers at last: the killed runs die
  for (int i = 0; i < 150 && Find(*snapshot, "verylongdevicename0") == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = collect(2000 + i);
  }
  EXPECT_NE(Find(*snapshot, "verylongdevicename0"), nullptr);  // its turn came
  EXPECT_EQ(StateOf(stuck), '-');                              // reaped, not a zombie
  EXPECT_GT(Lines(starts).size(), 4u);                         // the disks are asked again
}

TEST(SmartSource, FiguresOutOfRangeAreCountedAndNamedAsTheCollectorsParseErrors) {
  SamplerOptions o = Options();
  o.smart.command =
      Fake("sda", R"(echo '{"smartctl":{"exit_status":0},"smart_status":{"passed":true},)"
                  R"("temperature":{"current":1e308},"power_cycle_count":-1}')");
  Sampler sampler(o);
  const FileTree procfs(kTree + "/proc"), sysfs(kTree + "/sys");
  auto snapshot = sampler.Collect(procfs, sysfs, 1000);
  for (int i = 0; i < 100 && Find(*snapshot, "sda") == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    snapshot = sampler.Collect(procfs, sysfs, 1001 + i);
  }
  const SmartSeries* sda = Find(*snapshot, "sda");
  ASSERT_NE(sda, nullptr);
  EXPECT_TRUE(sda->error.empty()) << sda->error;  // its health stands
  EXPECT_FALSE(sda->report->temperature_celsius.has_value());
  EXPECT_FALSE(sda->report->power_cycles.has_value());
  const auto status = std::ranges::find(snapshot->collectors, "smart", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_EQ(status->parse_errors_total, 2u);
  EXPECT_NE(status->parse_error.find("smartctl /dev/sda: temperature.current"), std::string::npos)
      << status->parse_error;
  EXPECT_NE(status->parse_error.find("1e+308"), std::string::npos) << status->parse_error;
}

}  // namespace
}  // namespace iowatch::daemon
