// Settings declared outside config.h (a source's rows): read beside the
// schema's own keys, with the same errors, defaults when unset, and placed
// in AllConfigKeys under their section.
#include "config/settings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "config/config.h"

namespace iowatch::config {
namespace {

using std::chrono::milliseconds;

constexpr Setting kEnabled{.key = "collectors.foo.enabled", .default_value = "true"};
constexpr Setting kInterval{.key = "collectors.foo.interval",
                            .type = SettingType::kDuration,
                            .default_value = "10m",
                            .min = 1000};
constexpr Setting kDepth{.key = "collectors.foo.depth",
                         .type = SettingType::kInteger,
                         .default_value = "2",
                         .min = 1,
                         .max = 16};
constexpr Setting kShare{.key = "collectors.foo.share",
                         .type = SettingType::kNumber,
                         .default_value = "0.5",
                         .min = 0,
                         .max = 1};
constexpr Setting kPattern{
    .key = "collectors.foo.include", .type = SettingType::kRegex, .default_value = ""};
constexpr Setting kProgram = PathSetting("collectors.foo.program", "footool");
constexpr Setting kRows[] = {kEnabled, kInterval, kDepth, kShare, kPattern, kProgram};

Result<Config> ParseWithRows(std::string_view yaml) { return ParseConfig(yaml, "t.yaml", kRows); }

std::string SettingsMessageOf(std::string_view yaml) {
  const auto c = ParseWithRows(yaml);
  return c ? "parsed" : c.error().ToString();
}

TEST(Settings, AFileSetsThemBesideTheSchemasKeys) {
  const auto c = ParseWithRows(
      "sampling:\n  interval: 2s\ncollectors:\n  foo:\n"
      "    enabled: false\n    interval: 90s\n    depth: 7\n    share: 0.25\n"
      "    include: \"^sd\"\n    program: /opt/foo/bin/footool\n");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->sampling.interval, milliseconds(2000));
  EXPECT_FALSE(c->settings.Get<bool>(kEnabled));
  EXPECT_EQ(c->settings.Get<milliseconds>(kInterval), milliseconds(90000));
  EXPECT_EQ(c->settings.Get<uint32_t>(kDepth), 7u);
  EXPECT_DOUBLE_EQ(c->settings.Get<double>(kShare), 0.25);
  EXPECT_EQ(c->settings.Get<std::string>(kPattern), "^sd");
  EXPECT_EQ(c->settings.Get<std::string>(kProgram), "/opt/foo/bin/footool");
}

TEST(Settings, UnsetOnesHaveTheirRowsDefaults) {
  const auto c = ParseWithRows("collectors:\n  foo:\n    depth: 3\n");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_TRUE(c->settings.Get<bool>(kEnabled));
  EXPECT_EQ(c->settings.Get<milliseconds>(kInterval), milliseconds(600000));
  EXPECT_EQ(c->settings.Get<uint32_t>(kDepth), 3u);
  EXPECT_DOUBLE_EQ(c->settings.Get<double>(kShare), 0.5);
  EXPECT_EQ(SettingValues().Get<uint32_t>(kDepth), 2u);
  // Set to its default, a setting is as if never set: equal values compare
  // equal (a reload that changes nothing).
  const auto same = ParseWithRows("collectors:\n  foo:\n    depth: 2\n    share: 0.5\n");
  ASSERT_TRUE(same.has_value()) << same.error().ToString();
  EXPECT_EQ(same->settings, SettingValues());
  // A section of settings with every key commented out: all defaults.
  const auto empty = ParseWithRows("collectors:\n  foo:\n");
  ASSERT_TRUE(empty.has_value()) << empty.error().ToString();
  EXPECT_EQ(empty->settings, SettingValues());
}

TEST(Settings, WrongValuesAreLocatedAndSayWhatTheTypeExpects) {
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    enabled: yes\n"),
            "t.yaml:3:14: collectors.foo.enabled: expected true or false, found \"yes\"");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    interval: 10ms\n"),
            "t.yaml:3:15: collectors.foo.interval: expected a duration of at least 1s, found "
            "\"10ms\"");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    depth: 17\n"),
            "t.yaml:3:12: collectors.foo.depth: expected an integer from 1 to 16, found \"17\"");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    depth: [1]\n"),
            "t.yaml:3:12: collectors.foo.depth: expected an integer from 1 to 16, found a list");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    share: 2\n"),
            "t.yaml:3:12: collectors.foo.share: expected a number at least 0 and at most 1, "
            "found \"2\"");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    include: \"(\"\n"),
            SettingsMessageOf("devices:\n  include: \"(\"\n")
                .replace(0, std::string("t.yaml:2:12: devices.include").size(),
                         "t.yaml:3:14: collectors.foo.include"));
  const std::string empty_path = SettingsMessageOf("collectors:\n  foo:\n    program: \"\"\n");
  EXPECT_TRUE(empty_path.starts_with("t.yaml:3:14: collectors.foo.program: ")) << empty_path;
  EXPECT_NE(empty_path.find("non-empty path"), std::string::npos) << empty_path;
}

TEST(Settings, UnknownAndDuplicateKeysNameTheSettingsToo) {
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    enabld: true\n"),
            "t.yaml:3:5: collectors.foo.enabld: unknown key; expected one of enabled, interval, "
            "depth, share, include, program");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  fo:\n"),
            "t.yaml:2:3: collectors.fo: unknown key; expected one of foo");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo:\n    depth: 3\n    depth: 4\n"),
            "t.yaml:4:5: collectors.foo.depth: duplicate key");
  EXPECT_EQ(SettingsMessageOf("collectors:\n  foo: 3\n"),
            "t.yaml:2:8: collectors.foo: expected a map with keys enabled, interval, depth, "
            "share, include, program, found \"3\"");
  // Without the rows the same file is refused.
  const auto without = ParseConfig("collectors:\n  foo:\n    depth: 3\n", "t.yaml");
  ASSERT_FALSE(without.has_value());
  EXPECT_NE(without.error().ToString().find("collectors.foo: unknown key"), std::string::npos);
}

TEST(Settings, AllConfigKeysListsThemAfterTheirSectionsLastKey) {
  const std::vector<std::string> plain = AllConfigKeys();
  const std::vector<std::string> keys = AllConfigKeys(kRows);
  ASSERT_EQ(keys.size(), plain.size() + std::size(kRows));
  const auto last = std::ranges::find(keys, "passive.shadow_diskstats");
  ASSERT_NE(last, keys.end());
  for (size_t i = 0; i < std::size(kRows); ++i) EXPECT_EQ(last[1 + i], kRows[i].key);
  EXPECT_EQ(last[1 + std::size(kRows)], "paths.procfs");
  // A row under no section the schema has goes last.
  constexpr Setting kElsewhere[] = {{.key = "other.flag", .default_value = "false"}};
  EXPECT_EQ(AllConfigKeys(kElsewhere).back(), "other.flag");
  const auto seen = ConfigKeysIn("collectors:\n  foo:\n    share: 1\n", "t.yaml", kRows);
  ASSERT_TRUE(seen.has_value()) << seen.error().ToString();
  EXPECT_EQ(*seen, std::vector<std::string>{"collectors.foo.share"});
}

}  // namespace
}  // namespace iowatch::config
