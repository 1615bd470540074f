// Config: defaults, the bundled file, every key, file loading.
#include "config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "daemon/sources/block_io/block_io_source.h"
#include "daemon/sources/filesystem/filesystem_source.h"
#include "daemon/sources/kmsg/kmsg_source.h"
#include "daemon/sources/smart/smart_source.h"
#include "daemon/sources/thin_pool/thin_pool_source.h"
#include "tests/unit/config/config_test_util.h"
#include "tests/unit/config/every_probes_key.h"
#include "tests/unit/source_tree.h"

namespace iowatch::config {
namespace {

using std::chrono::milliseconds;

using testing::BundledSettings;
using testing::kBundled;
using testing::Parsed;
const std::string kReference = iowatch::testing::SourceDir() + "/docs/configuration.md";
const std::string kFixtures = iowatch::testing::FixturesDir() + "/config";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every probes key, as probes_config_test.cc checks it value by value.
const std::string kEveryProbesKey = std::string(test_data::kEveryProbesKeyButJobs) + "  jobs: []\n";

TEST(Config, Defaults) {
  const Config c;
  EXPECT_EQ(c.web.listen_address, "127.0.0.1:9860");
  EXPECT_EQ(c.web.read_timeout, milliseconds(10000));
  EXPECT_EQ(c.web.write_timeout, milliseconds(10000));
  EXPECT_EQ(c.web.idle_timeout, milliseconds(60000));
  EXPECT_EQ(c.web.max_connections, 64u);
  EXPECT_EQ(c.web.max_header_bytes, 8192u);
  EXPECT_EQ(c.web.tls_cert_file, "");
  EXPECT_EQ(c.web.tls_key_file, "");
  EXPECT_TRUE(c.web.basic_auth_users.empty());
  EXPECT_EQ(c.sampling.interval, milliseconds(1000));
  EXPECT_EQ(c.sampling.window, milliseconds(60000));
  EXPECT_EQ(c.devices.include, "");
  EXPECT_EQ(c.devices.exclude, R"(^(loop|ram|zram|fd)\d+$)");
  EXPECT_FALSE(c.devices.partitions);
  EXPECT_EQ(c.procfs, "/proc");
  EXPECT_EQ(c.sysfs, "/sys");
  EXPECT_EQ(c.udev_data, "/run/udev/data");
  EXPECT_EQ(c.state_dir, "/var/lib/iowatch");
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.source, "");
}

TEST(Config, EmptyAndCommentOnlyDocumentsMeanDefaults) {
  for (const char* text : {"", "\n\n", "# nothing\n  # at all\n", "---\n", "---\n...\n", "~\n"}) {
    const auto c = ParseConfig(text, "empty.yaml");
    ASSERT_TRUE(c.has_value()) << '"' << text << "\": " << c.error().ToString();
    Config expected;
    expected.source = "empty.yaml";
    EXPECT_EQ(*c, expected) << '"' << text << '"';
  }
  const auto file = LoadConfigFile(kFixtures + "/comments_only.yaml", {});
  ASSERT_TRUE(file.has_value()) << file.error().ToString();
  EXPECT_EQ(file->source, kFixtures + "/comments_only.yaml");
  EXPECT_EQ(file->web, WebConfig{});
  EXPECT_EQ(file->log_level, "info");
}

TEST(Config, SectionsWithoutKeysMeanDefaults) {
  Config expected;
  expected.source = testing::kTestFile;
  EXPECT_EQ(Parsed("web:\nsampling:\ndevices: {}\npaths:\nlog: ~\n"), expected);
  EXPECT_EQ(Parsed("web: {tls: {}, basic_auth_users: ~}\n"), expected);
}

TEST(Config, BundledFileParsesToExactlyTheDefaults) {
  const auto c = LoadConfigFile(kBundled, BundledSettings());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  Config expected;
  expected.source = kBundled;
  EXPECT_EQ(*c, expected);
}

TEST(Config, BundledFileSetsEveryKeyInReferenceOrder) {
  const auto keys = ConfigKeysIn(ReadText(kBundled), kBundled, BundledSettings());
  ASSERT_TRUE(keys.has_value()) << keys.error().ToString();
  EXPECT_EQ(*keys, AllConfigKeys(BundledSettings()));
  EXPECT_EQ(AllConfigKeys().size(), 63u);                   // config.h's
  EXPECT_EQ(AllConfigKeys(BundledSettings()).size(), 80u);  // and the sources'
  EXPECT_EQ(AllConfigKeys().front(), "web.listen_address");
  EXPECT_EQ(AllConfigKeys().back(), "probes.jobs");
}

TEST(Config, ReferenceDocumentHasARowForEveryKey) {
  const std::string doc = ReadText(kReference);
  for (const std::string& key : AllConfigKeys(BundledSettings())) {
    EXPECT_NE(doc.find("| `" + key + "` |"), std::string::npos) << key;
  }
}

// The fixture holds every key outside probes; probes_config_test.cc reads
// every probes key with its values.
TEST(Config, EveryKeyIsRead) {
  const std::string path = kFixtures + "/every_key.yaml";
  const auto keys = ConfigKeysIn(ReadText(path) + kEveryProbesKey, path, BundledSettings());
  ASSERT_TRUE(keys.has_value()) << keys.error().ToString();
  EXPECT_EQ(*keys, AllConfigKeys(BundledSettings()));

  const auto c = ParseConfig(ReadText(path), "every_key.yaml", BundledSettings());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->web.listen_address, "[::1]:19860");
  EXPECT_EQ(c->web.read_timeout, milliseconds(1500));
  EXPECT_EQ(c->web.write_timeout, milliseconds(90000));
  EXPECT_EQ(c->web.idle_timeout, milliseconds(7200000));
  EXPECT_EQ(c->web.max_connections, 8u);
  EXPECT_EQ(c->web.max_header_bytes, 16384u);
  EXPECT_EQ(c->web.tls_cert_file, "tls/server.crt");
  EXPECT_EQ(c->web.tls_key_file, "/etc/iowatch/server.key");
  const std::map<std::string, std::string> users = {
      {"alice", "$2b$10$tdYaENOqHspa4/nfnRHKSOxUx1G1Odb8ISB2dU8LqnRx3uVH7tt4y"},
      {"bob", "$2y$12$jXOtBwLYf9U.B2mOPtdRbekGeKp6.5NceSQPwTu9WPG3ciITMCUZG"}};
  EXPECT_EQ(c->web.basic_auth_users, users);
  EXPECT_EQ(c->sampling.interval, milliseconds(250));
  EXPECT_EQ(c->sampling.window, milliseconds(300000));
  EXPECT_EQ(c->devices.include, R"(^(sd[a-z]+|nvme\d+n\d+)$)");
  EXPECT_EQ(c->devices.exclude, "");
  EXPECT_TRUE(c->devices.partitions);
  EXPECT_FALSE(c->cgroups.enabled);
  EXPECT_EQ(c->cgroups.depth, 3u);
  EXPECT_EQ(c->cgroups.include, R"(^system\.slice/.*$)");
  EXPECT_EQ(c->cgroups.exclude, R"(\.scope$)");
  EXPECT_EQ(c->cgroups.max_series, 500u);
  EXPECT_EQ(c->cgroups.process_interval, milliseconds(30000));
  EXPECT_FALSE(c->passive.enabled);
  EXPECT_EQ(c->passive.exclude, "dm-.*");
  EXPECT_EQ(c->passive.keep_windows, std::chrono::hours(7 * 24));
  EXPECT_TRUE(c->passive.shadow_diskstats);
  EXPECT_TRUE(c->settings.Get<bool>(daemon::kBpfEnabled));
  EXPECT_TRUE(c->settings.Get<bool>(daemon::kBpfQueueStage));
  EXPECT_FALSE(c->settings.Get<bool>(daemon::kKmsgEnabled));
  EXPECT_FALSE(c->settings.Get<bool>(daemon::kSmartEnabled));
  EXPECT_EQ(c->settings.Get<milliseconds>(daemon::kSmartInterval), milliseconds(3600000));
  EXPECT_EQ(c->settings.Get<milliseconds>(daemon::kSmartTimeout), milliseconds(30000));
  EXPECT_FALSE(c->settings.Get<bool>(daemon::kThinPoolEnabled));
  EXPECT_EQ(c->settings.Get<milliseconds>(daemon::kThinPoolInterval), milliseconds(300000));
  EXPECT_EQ(c->settings.Get<milliseconds>(daemon::kThinPoolTimeout), milliseconds(10000));
  EXPECT_EQ(c->settings.Get<std::string>(daemon::kThinPoolDmsetup), "/usr/sbin/dmsetup");
  EXPECT_FALSE(c->settings.Get<bool>(daemon::kFilesystemEnabled));
  EXPECT_EQ(c->settings.Get<std::string>(daemon::kFsTypesInclude), "^(ext4|xfs)$");
  EXPECT_EQ(c->settings.Get<std::string>(daemon::kFsTypesExclude), "");
  EXPECT_EQ(c->settings.Get<std::string>(daemon::kMountPointsInclude), "^/data/.*$");
  EXPECT_EQ(c->settings.Get<std::string>(daemon::kMountPointsExclude), "^/data/scratch$");
  EXPECT_EQ(c->settings.Get<milliseconds>(daemon::kMountTimeout), milliseconds(250));
  EXPECT_EQ(c->procfs, "/host/proc");
  EXPECT_EQ(c->sysfs, "/host/sys");
  EXPECT_EQ(c->udev_data, "udev");
  EXPECT_EQ(c->state_dir, "state");
  EXPECT_EQ(c->log_level, "debug");
  EXPECT_EQ(c->source, "every_key.yaml");
}

TEST(Config, LoadConfigFileResolvesRelativePathsAgainstTheFilesDirectory) {
  const auto c = LoadConfigFile(kFixtures + "/every_key.yaml", BundledSettings());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->state_dir, kFixtures + "/state");
  EXPECT_EQ(c->web.tls_cert_file, kFixtures + "/tls/server.crt");
  EXPECT_EQ(c->web.tls_key_file, "/etc/iowatch/server.key");
  EXPECT_EQ(c->procfs, "/host/proc");
  EXPECT_EQ(c->udev_data, kFixtures + "/udev");
  EXPECT_EQ(c->source, kFixtures + "/every_key.yaml");
}

TEST(Config, FlowAndBlockStylesAndQuotingAreEquivalent) {
  const Config block = Parsed(
      "sampling:\n  interval: 2s\n  window: 1m\n"
      "devices:\n  partitions: true\n  exclude: '^loop'\n");
  const Config flow = Parsed(
      "sampling: {interval: \"2s\", window: '1m'}\n"
      "devices: {partitions: TRUE, exclude: \"^loop\"}\n");
  EXPECT_EQ(block, flow);
  EXPECT_EQ(block.sampling.window, milliseconds(60000));
  EXPECT_EQ(block.devices.exclude, "^loop");
}

TEST(Config, ScalarsThatLookLikeOtherTypesAreStrings) {
  // YAML would call these a number, null and a bool; the keys want strings.
  const Config c = Parsed("state_dir: 1234\nlog: {level: \"off\"}\ndevices: {include: \"~\"}\n");
  EXPECT_EQ(c.state_dir, "1234");
  EXPECT_EQ(c.log_level, "off");
  EXPECT_EQ(c.devices.include, "~");
}

TEST(Config, BoundaryValuesAreAccepted) {
  const Config c = Parsed(
      "web: {max_connections: 65535, max_header_bytes: 1M, read_timeout: 1ms}\n"
      "sampling: {interval: 100ms, window: 100ms}\n");
  EXPECT_EQ(c.web.max_connections, 65535u);
  EXPECT_EQ(c.web.max_header_bytes, 1048576u);
  EXPECT_EQ(c.web.read_timeout, milliseconds(1));
  EXPECT_EQ(c.sampling.interval, milliseconds(100));
  EXPECT_EQ(Parsed("web: {max_connections: 1, max_header_bytes: 1k}\n").web.max_header_bytes,
            1024u);
}

TEST(Config, UnreadableFileNamesPathAndErrno) {
  const std::string missing = kFixtures + "/no_such_file.yaml";
  const auto r = LoadConfigFile(missing, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().os_errno, ENOENT);
  EXPECT_EQ(r.error().ToString(), missing + ": cannot read config file: No such file or directory");

  const auto dir = LoadConfigFile(kFixtures, {});
  ASSERT_FALSE(dir.has_value());
  EXPECT_EQ(dir.error().ToString(),
            kFixtures + ": cannot read config file: expected a regular file, found a directory");
}

TEST(Config, SyntaxErrorInAFileHasItsPosition) {
  const std::string path = kFixtures + "/bad_syntax.yaml";
  const auto r = LoadConfigFile(path, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().ToString(), path + ":3:4: invalid YAML: end of map not found");
}

}  // namespace
}  // namespace iowatch::config
