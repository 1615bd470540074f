// The registry is the one list of the sample's sources: each entry is whole,
// docs/metrics.md lists exactly its collectors, each switch is a key of the
// bundled config, and a source the Sampler has never heard of runs, merges
// and is served stale when stuck from its descriptor alone.
#include "daemon/sources/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/sources/block_io/block_io_source.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Registry, EverySourceIsWholeAndNamesItsOwnCollectors) {
  std::set<std::string_view> names, collectors;
  for (const SourceDescriptor& source : RegisteredSources()) {
    SCOPED_TRACE(source.name);
    EXPECT_TRUE(names.insert(source.name).second) << "registered twice";
    EXPECT_FALSE(source.reads.empty());
    ASSERT_FALSE(source.collectors.empty());
    for (const std::string_view collector : source.collectors) {
      EXPECT_TRUE(collectors.insert(collector).second) << collector << " reported by two sources";
    }
    ASSERT_NE(source.enabled, nullptr);
    ASSERT_NE(source.make, nullptr);
    ASSERT_NE(source.move_fields, nullptr);
    ASSERT_NE(source.copy_fields, nullptr);
    ASSERT_NE(source.add_families, nullptr);
    EXPECT_NE(source.make(), nullptr);
    // A source that can be off says which key turns it off.
    SamplerOptions off;
    off.cgroups.enabled = false;
    off.process_interval_seconds = 0;
    for (const config::Setting& setting : RegisteredSettings()) {
      if (setting.key.ends_with(".enabled")) off.settings.Set(setting, false);
    }
    EXPECT_EQ(source.enabled(off), source.config_switch.empty());
  }
}

// The collectors named in the reference's row of iowatch_collector_success's
// sibling, in order: "collector=a\|b\|c".
std::vector<std::string> DocumentedCollectors() {
  const std::string doc = ReadFile(iowatch::testing::SourceDir() + "/docs/metrics.md");
  const std::string row = "| `iowatch_collector_duration_seconds` |";
  const size_t at = doc.find(row);
  if (at == std::string::npos) return {};
  const size_t list = doc.find("collector=", at) + std::string_view("collector=").size();
  const std::string names = doc.substr(list, doc.find(' ', list) - list);
  std::vector<std::string> out;
  for (size_t from = 0; from <= names.size();) {
    const size_t bar = std::min(names.find("\\|", from), names.size());
    out.push_back(names.substr(from, bar - from));
    from = bar + 2;
  }
  return out;
}

TEST(Registry, TheReferenceListsExactlyTheRegisteredCollectorsInOrder) {
  std::vector<std::string> registered;
  for (const SourceDescriptor& source : RegisteredSources()) {
    for (const std::string_view collector : source.collectors) registered.emplace_back(collector);
  }
  EXPECT_EQ(DocumentedCollectors(), registered)
      << "docs/metrics.md's collector list is scripts/docs.py's: run python3 scripts/docs.py";
}

// A source's settings are read by the loader beside config.h's keys: each
// is registered once, its default parses as its type, and a switch that is
// a setting is a boolean one.
TEST(Registry, EachSettingIsRegisteredOnceAndItsDefaultParses) {
  std::set<std::string_view> keys;
  for (const config::Setting& setting : RegisteredSettings()) {
    SCOPED_TRACE(setting.key);
    EXPECT_TRUE(keys.insert(setting.key).second) << "registered twice";
    const auto value = config::ParseSetting(setting, setting.default_value);
    EXPECT_TRUE(value.has_value()) << value.error().ToString();
  }
  for (const SourceDescriptor& source : RegisteredSources()) {
    for (const config::Setting& setting : source.settings) {
      if (setting.key == source.config_switch) {
        EXPECT_EQ(setting.type, config::SettingType::kBool) << setting.key;
      }
    }
  }
  const std::vector<std::string> schema = config::AllConfigKeys();
  for (const std::string_view key : keys) {
    EXPECT_EQ(std::ranges::count(schema, key), 0) << key << " is config.h's too";
  }
}

TEST(Registry, EachSwitchIsAKeyOfTheBundledConfig) {
  const std::string config = ReadFile(iowatch::testing::SourceDir() + "/config/iowatch.yaml");
  ASSERT_FALSE(config.empty());
  for (const SourceDescriptor& source : RegisteredSources()) {
    if (source.config_switch.empty()) continue;
    // "cgroups.process_interval": the last key, under its section.
    const std::string_view key = source.config_switch.substr(source.config_switch.rfind('.') + 1);
    EXPECT_NE(config.find(std::string(key) + ":"), std::string::npos)
        << source.config_switch << " is not in config/iowatch.yaml";
  }
}

// check-config asks each enabled source whether it can run here: the BPF
// collector tries its load and says why it failed; the kernel log's reader
// tries to open the log. No other source has anything that could stop it.
TEST(Registry, TheBpfAndKmsgSourcesSayWhyTheyCannotRunHere) {
  const auto bpf = std::ranges::find(RegisteredSources(), "block_io", &SourceDescriptor::name);
  ASSERT_NE(bpf, RegisteredSources().end());
  ASSERT_NE(bpf->cannot_run_here, nullptr);
  SamplerOptions options = TestSamplerOptions();
  options.settings.Set(kBpfEnabled, true);
  options.block_io.load = []() -> Result<std::unique_ptr<collectors::bpf::BlockIoCounters>> {
    return MakeError(ErrorCode::kUnsupported, "/sys/kernel/btf/vmlinux: no BTF");
  };
  const auto cause = bpf->cannot_run_here(options);
  ASSERT_TRUE(cause.has_value());
  EXPECT_NE(cause->find("no BTF"), std::string::npos) << *cause;
  const auto kmsg = std::ranges::find(RegisteredSources(), "kmsg", &SourceDescriptor::name);
  ASSERT_NE(kmsg, RegisteredSources().end());
  ASSERT_NE(kmsg->cannot_run_here, nullptr);
  options.settings.Set(kKmsgEnabled, true);
  options.kmsg.path = "/nonexistent/kmsg";
  const auto kmsg_cause = kmsg->cannot_run_here(options);
  ASSERT_TRUE(kmsg_cause.has_value());
  EXPECT_NE(kmsg_cause->find("/nonexistent/kmsg"), std::string::npos) << *kmsg_cause;
  for (const SourceDescriptor& source : RegisteredSources()) {
    if (source.name != "block_io" && source.name != "kmsg") {
      EXPECT_EQ(source.cannot_run_here, nullptr) << source.name;
    }
  }
}

// A source no file of the daemon names: it counts its reads into the
// snapshot's pressure maxima, and blocks on its second read until released.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = true;
  bool block_second = false;
  int reads = 0;
};

Gate& TheGate() {
  static Gate gate;
  return gate;
}

class CountingSource : public SampleSource {
 public:
  void Collect(const FileTree&, const FileTree&, const SourceContext&, Snapshot& out) override {
    Gate& gate = TheGate();
    std::unique_lock lock(gate.mutex);
    const int read = ++gate.reads;
    if (read == 2 && gate.block_second) {
      gate.open = false;
      gate.opened.wait(lock, [&] { return gate.open; });
    }
    out.pressure.avg10_window_max[0][0] = read;
    out.collectors.push_back({"counting", 0.5, true, 0, {}, {}});
  }
};

constexpr std::string_view kCountingCollectors[] = {"counting"};
constexpr SourceDescriptor kCounting = Registered<CountingSource, &Snapshot::pressure>({
    .name = "counting",
    .reads = "nothing",
    .collectors = kCountingCollectors,
    .add_families = [](TableBuilder&) {},
});
constexpr SourceDescriptor kOnlyCounting[] = {kCounting};

const FileTree kCcissProcfs(iowatch::testing::FixturesDir() + "/cciss/proc");
const FileTree kCcissSysfs(iowatch::testing::FixturesDir() + "/cciss/sys");

TEST(Registry, ASourceRunsAndMergesFromItsDescriptorAlone) {
  TheGate().reads = 0;
  Sampler sampler(TestSamplerOptions(), kOnlyCounting);
  sampler.Collect(kCcissProcfs, kCcissSysfs, 1000);
  const auto snapshot = sampler.Collect(kCcissProcfs, kCcissSysfs, 1001);
  ASSERT_EQ(snapshot->collectors.size(), 1u);
  EXPECT_EQ(snapshot->collectors[0].name, "counting");
  EXPECT_TRUE(snapshot->collectors[0].success);
  EXPECT_EQ(snapshot->pressure.avg10_window_max[0][0], 2);
  EXPECT_TRUE(snapshot->devices.empty());  // no disk source: no disks
}

TEST(Registry, AStuckSourceIsServedFromThePreviousSampleAndTimedOut) {
  Gate& gate = TheGate();
  gate.reads = 0;
  gate.block_second = true;
  SamplerOptions options = TestSamplerOptions();
  options.read_deadline_seconds = 0.2;
  {
    Sampler sampler(std::move(options), kOnlyCounting);
    sampler.Collect(kCcissProcfs, kCcissSysfs, 1000);
    const auto stale = sampler.Collect(kCcissProcfs, kCcissSysfs, 1001);  // the second read blocks
    ASSERT_EQ(stale->collectors.size(), 1u);
    EXPECT_EQ(stale->collectors[0].name, "counting");
    EXPECT_FALSE(stale->collectors[0].success);
    EXPECT_EQ(stale->collectors[0].timeouts_total, 1u);
    EXPECT_NE(stale->collectors[0].error.find("no answer within 0.2 s"), std::string::npos)
        << stale->collectors[0].error;
    EXPECT_EQ(stale->pressure.avg10_window_max[0][0], 1);  // the first read's, copied
    // Still stuck: the next sample does not start it again, and counts again.
    const auto still = sampler.Collect(kCcissProcfs, kCcissSysfs, 1002);
    EXPECT_EQ(still->collectors[0].timeouts_total, 2u);
    EXPECT_EQ(still->pressure.avg10_window_max[0][0], 1);
    {
      std::lock_guard lock(gate.mutex);
      EXPECT_EQ(gate.reads, 2);
      gate.open = true;
    }
    gate.opened.notify_all();
  }
  std::lock_guard lock(gate.mutex);
  gate.block_second = false;
}

// A source that reads nothing and stamps the sample's sequence it ran in.
class StampingSource : public SampleSource {
 public:
  void Collect(const FileTree&, const FileTree&, const SourceContext& context,
               Snapshot& out) override {
    out.user_hz = static_cast<double>(context.tick);
    out.collectors.push_back({"stamping", 0, true, 0, {}, {}});
  }
};

constexpr std::string_view kStampingCollectors[] = {"stamping"};
constexpr SourceDescriptor kStamping = Registered<StampingSource, &Snapshot::user_hz>({
    .name = "stamping",
    .reads = "nothing",
    .collectors = kStampingCollectors,
    .add_families = [](TableBuilder&) {},
});
constexpr SourceDescriptor kCountingThenStamping[] = {kCounting, kStamping};

// A stuck source holds only itself: the source after it answers in the same
// sample.
TEST(Registry, ASourceAfterAStuckOneStillAnswersInTheSameSample) {
  Gate& gate = TheGate();
  gate.reads = 0;
  gate.block_second = true;
  SamplerOptions options = TestSamplerOptions();
  options.read_deadline_seconds = 0.5;
  {
    Sampler sampler(std::move(options), kCountingThenStamping);
    sampler.Collect(kCcissProcfs, kCcissSysfs, 1000);
    const auto stale = sampler.Collect(kCcissProcfs, kCcissSysfs, 1001);  // counting blocks
    ASSERT_EQ(stale->collectors.size(), 2u);
    EXPECT_EQ(stale->collectors[0].name, "counting");
    EXPECT_FALSE(stale->collectors[0].success);
    EXPECT_EQ(stale->collectors[1].name, "stamping");
    EXPECT_TRUE(stale->collectors[1].success) << stale->collectors[1].error;
    EXPECT_EQ(stale->user_hz, 2);  // this sample's, not the previous one's
    const auto still = sampler.Collect(kCcissProcfs, kCcissSysfs, 1002);
    EXPECT_FALSE(still->collectors[0].success);
    EXPECT_TRUE(still->collectors[1].success);
    EXPECT_EQ(still->user_hz, 3);
    {
      std::lock_guard lock(gate.mutex);
      gate.open = true;
    }
    gate.opened.notify_all();
  }
  std::lock_guard lock(gate.mutex);
  gate.block_second = false;
}

}  // namespace
}  // namespace iowatch::daemon
