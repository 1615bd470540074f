// The thin_pool source with a dmsetup that answers from tests/fixtures/thin-pool/
// (fake-dmsetup.sh): insights-core's two real pools and every hand-made state
// rendered against golden files (IOWATCH_UPDATE_GOLDEN=1 rewrites them); no
// sample waits for dmsetup; nothing is run on a host without a dm device; no
// dmsetup is no pools and no failure; dmsetup exiting 1 (no privilege), one
// that hangs past the timeout (killed, the last pools still served) and one
// printing what the parser refuses fail the collector with the cause.
#include "daemon/sources/thin_pool/thin_pool_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/one_source.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kThinDir = iowatch::testing::FixturesDir() + "/thin-pool";

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A host: <root>/sys/block/dm-N/dm/name for each name given, an empty proc,
// and the scripts a test writes.
class ThinHost {
 public:
  explicit ThinHost(const std::vector<std::string>& dm_names) {
    std::filesystem::create_directories(dir_.path() / "proc");
    std::filesystem::create_directories(dir_.path() / "sys/block/sda");
    for (size_t i = 0; i < dm_names.size(); ++i) {
      const auto dm = dir_.path() / ("sys/block/dm-" + std::to_string(i)) / "dm";
      std::filesystem::create_directories(dm);
      std::ofstream(dm / "name") << dm_names[i] << "\n";
    }
  }
  // An executable script `name` holding `body` after "#!/bin/sh".
  std::string Script(const std::string& name, const std::string& body) const {
    const std::string path = dir_.File(name);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }
  // dmsetup answering from the fixture set `set` (insights-core, states).
  std::string Fixture(const std::string& set) const {
    return Script("dmsetup-" + set, "exec sh " + kThinDir + "/fake-dmsetup.sh " + set + " \"$@\"");
  }
  FileTree procfs() const { return FileTree(dir_.File("proc")); }
  FileTree sysfs() const { return FileTree(dir_.File("sys")); }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  iowatch::testing::TempDir dir_;
};

SamplerOptions ThinOptions(const std::string& dmsetup) {
  SamplerOptions o = TestSamplerOptions();
  o.settings.Set(kThinPoolDmsetup, dmsetup);
  o.settings.Set(kThinPoolInterval, std::chrono::milliseconds(1000));
  o.settings.Set(kThinPoolTimeout, std::chrono::milliseconds(1000));
  return o;
}

// One source kept across samples, on the real monotonic clock, as the
// Sampler's worker runs it.
class ThinSampler {
 public:
  ThinSampler(const ThinHost& host, SamplerOptions options)
      : host_(host),
        source_(ThinPoolSourceDescriptor().make()),
        options_(std::make_shared<const SamplerOptions>(std::move(options))) {}

  Snapshot Collect() {
    SourceContext context{
        .tick = ++tick_, .window_samples = 1, .options = options_, .now = Now, .devices = {}};
    Snapshot snapshot;
    const double start = Now();
    source_->Collect(host_.procfs(), host_.sysfs(), context, snapshot);
    worst_seconds_ = std::max(worst_seconds_, Now() - start);
    return snapshot;
  }
  // Samples every 20 ms until `done` holds (at most `seconds`).
  Snapshot CollectUntil(const std::function<bool(const Snapshot&)>& done, double seconds = 5) {
    Snapshot snapshot = Collect();
    for (const double end = Now() + seconds; !done(snapshot) && Now() < end;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      snapshot = Collect();
    }
    return snapshot;
  }
  double worst_seconds() const { return worst_seconds_; }

 private:
  const ThinHost& host_;
  std::unique_ptr<SampleSource> source_;
  std::shared_ptr<const SamplerOptions> options_;
  uint64_t tick_ = 0;
  double worst_seconds_ = 0;
};

const CollectorStatus& StatusOf(const Snapshot& s) {
  EXPECT_EQ(s.collectors.size(), 1u);
  EXPECT_EQ(s.collectors.at(0).name, "thin_pool");
  return s.collectors.at(0);
}

bool HasPools(const Snapshot& s) { return !s.thin_pool.pools.empty(); }
bool Failed(const Snapshot& s) { return !s.collectors.empty() && !s.collectors[0].success; }

void ExpectGolden(const std::string& actual, const std::string& name) {
  const std::string path = kThinDir + "/" + name;
  if (std::getenv("IOWATCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(iowatch::testing::ReadFile(path), actual)
      << "differs from " << path << " (IOWATCH_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(ThinPoolSource, TheCustomersPoolsArriveWithoutWaitingAsTheGoldenFileSays) {
  const ThinHost host({"rootvg-docker--pool", "appsvg-lvapps_docker", "rootvg-tanlv"});
  ThinSampler sampler(host, ThinOptions(host.Fixture("insights-core")));
  const Snapshot first = sampler.Collect();
  EXPECT_TRUE(StatusOf(first).success);  // under way: no pools yet, nothing failed
  const Snapshot snapshot = sampler.CollectUntil(HasPools);
  EXPECT_LT(sampler.worst_seconds(), 0.5);
  ASSERT_EQ(snapshot.thin_pool.pools.size(), 2u);
  EXPECT_EQ(snapshot.thin_pool.pools[0].device, "dm-0");
  EXPECT_EQ(snapshot.thin_pool.pools[1].device, "dm-1");
  EXPECT_TRUE(StatusOf(snapshot).success) << StatusOf(snapshot).error;
  EXPECT_EQ(StatusOf(snapshot).error, "");
  const std::string text = RenderSourceFamilies(AddThinPoolFamilies, snapshot);
  ExpectGolden(text, "insights-core.golden");
  const auto samples = iowatch::testing::ParsePrometheusSamples(text);
  using iowatch::testing::SampleKey;
  EXPECT_EQ(samples.at(SampleKey("iowatch_thin_pool_data_bytes",
                                 {{"device", "dm-0"}, {"pool", "rootvg-docker--pool"}})),
            129548288.0 * 512);
  EXPECT_EQ(samples.at(SampleKey("iowatch_thin_pool_data_used_bytes",
                                 {{"device", "dm-1"}, {"pool", "appsvg-lvapps_docker"}})),
            20663.0 * 1024 * 512);
  EXPECT_EQ(samples.at(SampleKey("iowatch_thin_pool_metadata_used_bytes",
                                 {{"device", "dm-1"}, {"pool", "appsvg-lvapps_docker"}})),
            697.0 * 4096);
  EXPECT_EQ(
      samples.at(SampleKey("iowatch_thin_pool_mode",
                           {{"device", "dm-0"}, {"mode", "rw"}, {"pool", "rootvg-docker--pool"}})),
      1);
}

TEST(ThinPoolSource, EveryStateAsTheGoldenFileSays) {
  const ThinHost host({"vg0-full", "vg1-strict"});  // the others' dm names unknown: no device
  ThinSampler sampler(host, ThinOptions(host.Fixture("states")));
  const Snapshot snapshot = sampler.CollectUntil(HasPools);
  ASSERT_EQ(snapshot.thin_pool.pools.size(), 6u);
  const std::string text = RenderSourceFamilies(AddThinPoolFamilies, snapshot);
  ExpectGolden(text, "states.golden");
  const auto samples = iowatch::testing::ParsePrometheusSamples(text);
  using iowatch::testing::SampleKey;
  const auto mode = [&](const std::string& pool, const std::string& m) {
    const std::string device = pool == "vg0-full" ? "dm-0" : pool == "vg1-strict" ? "dm-1" : "";
    iowatch::testing::SampleLabels labels{{"mode", m}, {"pool", pool}};
    if (!device.empty()) labels["device"] = device;
    return samples.at(SampleKey("iowatch_thin_pool_mode", labels));
  };
  EXPECT_EQ(mode("vg0-full", "out_of_data_space"), 1);
  EXPECT_EQ(mode("vg0-full", "rw"), 0);
  EXPECT_EQ(mode("vg0-readonly", "ro"), 1);
  EXPECT_EQ(mode("vg0-failed", "fail"), 1);
  EXPECT_EQ(mode("vg0-unreadable", "error"), 1);
  EXPECT_EQ(mode("vg0-check", "rw"), 1);
  EXPECT_EQ(samples.at(SampleKey("iowatch_thin_pool_needs_check", {{"pool", "vg0-check"}})), 1);
  EXPECT_EQ(samples.at(SampleKey("iowatch_thin_pool_error_if_no_space",
                                 {{"device", "dm-1"}, {"pool", "vg1-strict"}})),
            1);
  // A failed pool has its mode and nothing else.
  EXPECT_EQ(samples.count(SampleKey("iowatch_thin_pool_metadata_bytes", {{"pool", "vg0-failed"}})),
            0u);
}

TEST(ThinPoolSource, NothingRunsOnAHostWithoutADmDevice) {
  const ThinHost host({});
  const std::string marker = host.File("ran");
  ThinSampler sampler(host, ThinOptions(host.Script("dmsetup", "touch " + marker)));
  Snapshot s = sampler.Collect();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s = sampler.Collect();
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_TRUE(StatusOf(s).success) << StatusOf(s).error;
  EXPECT_NE(StatusOf(s).error.find("no device-mapper device"), std::string::npos)
      << StatusOf(s).error;
  EXPECT_TRUE(s.thin_pool.pools.empty());
  EXPECT_EQ(RenderSourceFamilies(AddThinPoolFamilies, s), "");
}

TEST(ThinPoolSource, NoDmsetupIsNoPoolsAndNoFailure) {
  const ThinHost host({"vg0-root"});
  ThinSampler sampler(host, ThinOptions("/nonexistent/dmsetup"));
  const Snapshot s = sampler.Collect();
  EXPECT_TRUE(StatusOf(s).success) << StatusOf(s).error;
  EXPECT_NE(StatusOf(s).error.find("no dmsetup"), std::string::npos) << StatusOf(s).error;
  EXPECT_NE(StatusOf(s).error.find("/nonexistent/dmsetup"), std::string::npos) << StatusOf(s).error;
  EXPECT_TRUE(s.thin_pool.pools.empty());
}

TEST(ThinPoolSource, DmsetupExitingOneFailsTheCollectorWithTheCause) {
  const ThinHost host({"vg0-root"});
  ThinSampler sampler(
      host, ThinOptions(host.Script(
                "dmsetup",
                "echo '/dev/mapper/control: open failed: Permission denied' >&2\n"
                "echo 'Failure to communicate with kernel device-mapper driver.' >&2\nexit 1")));
  const Snapshot s = sampler.CollectUntil(Failed);
  ASSERT_TRUE(Failed(s));
  EXPECT_NE(StatusOf(s).error.find("status --target thin-pool exited with status 1"),
            std::string::npos)
      << StatusOf(s).error;
  EXPECT_NE(StatusOf(s).error.find("CAP_SYS_ADMIN"), std::string::npos) << StatusOf(s).error;
}

TEST(ThinPoolSource, OutputTheParserRefusesFailsTheCollectorNamingTheLine) {
  const ThinHost host({"vg0-pool"});
  ThinSampler sampler(host,
                      ThinOptions(host.Script("dmsetup",
                                              "echo 'vg0-pool: 0 2048 thin-pool 1 1/64 1/16 - rw'\n"
                                              "echo 'vg0-pool2: 0 2048 thin-pool 1 1/64'")));
  const Snapshot s = sampler.CollectUntil(Failed);
  ASSERT_TRUE(Failed(s));
  EXPECT_NE(StatusOf(s).error.find("dmsetup status:2: expected"), std::string::npos)
      << StatusOf(s).error;
}

// Children of this process, from /proc (the dmsetup runs).
size_t ThinChildren() {
  size_t n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid = 0; children >> pid;) ++n;
  }
  return n;
}

TEST(ThinPoolSource, AHungDmsetupIsKilledAtTheTimeoutAndTheLastPoolsAreServed) {
  const ThinHost host({"rootvg-docker--pool", "appsvg-lvapps_docker"});
  const std::string hang = host.File("hang");
  ThinSampler sampler(
      host,
      ThinOptions(host.Script("dmsetup", "[ -e " + hang + " ] && exec sleep 600\nexec sh " +
                                             kThinDir + "/fake-dmsetup.sh insights-core \"$@\"")));
  const size_t before = ThinChildren();
  Snapshot s = sampler.CollectUntil(HasPools);
  ASSERT_EQ(s.thin_pool.pools.size(), 2u);
  std::ofstream(hang) << "";
  // The next reading starts an interval later, hangs, and is killed a timeout after that.
  s = sampler.CollectUntil(Failed, 10);
  ASSERT_TRUE(Failed(s));
  EXPECT_NE(StatusOf(s).error.find("did not answer within 1 s: killed"), std::string::npos)
      << StatusOf(s).error;
  EXPECT_EQ(s.thin_pool.pools.size(), 2u);  // the last good result
  EXPECT_LT(sampler.worst_seconds(), 0.5);  // no sample waited
  // The killed runs are reaped by later samples.
  for (int i = 0; i < 100 && ThinChildren() > before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s = sampler.Collect();
  }
  EXPECT_EQ(ThinChildren(), before);
}

// Registered: the Sampler runs it (TestSamplerOptions: no dmsetup) and reports its collector.
TEST(ThinPoolSourceRegistered, TheSamplerReportsItsCollector) {
  const ThinHost host({"vg0-root"});
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(host.procfs(), host.sysfs(), 1709647629);
  const auto status = std::ranges::find(snapshot->collectors, "thin_pool", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_TRUE(status->success) << status->error;
}

}  // namespace
}  // namespace iowatch::daemon
