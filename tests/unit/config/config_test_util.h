// What the config tests share: the bundled file, and a YAML text parsed as
// the file "t.yaml" into its Config or its error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "daemon/sources/registry.h"
#include "tests/unit/source_tree.h"

namespace iowatch::config::testing {

inline const std::string kBundled = iowatch::testing::SourceDir() + "/config/iowatch.yaml";
// The keys the bundled file holds beside config.h's: the registered
// sources' settings (the one dependency of these tests on the daemon).
inline std::vector<Setting> BundledSettings() { return daemon::RegisteredSettings(); }
inline constexpr char kTestFile[] = "t.yaml";

inline Config Parsed(std::string_view yaml) {
  auto config = ParseConfig(yaml, kTestFile);
  EXPECT_TRUE(config.has_value()) << config.error().ToString();
  return config.value_or(Config{});
}

// The error a document gives, or "parsed" when it gives none.
inline Error ErrorOf(std::string_view yaml) {
  const auto c = ParseConfig(yaml, kTestFile);
  if (c) return Error::Io("parsed");
  return c.error();
}

inline std::string MessageOf(std::string_view yaml) { return ErrorOf(yaml).ToString(); }

}  // namespace iowatch::config::testing
