// Prometheus text samples for the tests that compare iowatch's figures with
// another exporter's captured output (node_exporter's e2e-output lines): each
// sample as "name{a="x",b="y"}" with its labels in name order, so the two
// sides compare whatever order each writes them in.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "collectors/text/text_scan.h"

namespace iowatch::testing {

using SampleLabels = std::map<std::string, std::string>;
using Samples = std::map<std::string, double>;

inline std::string SampleKey(std::string_view name, const SampleLabels& labels) {
  std::string key = std::string(name) + "{";
  for (const auto& [label, value] : labels) {
    if (key.back() != '{') key += ",";
    key += label + "=\"" + value + "\"";
  }
  return key + "}";
}

// Lines 'name{a="x",b="y"} value' (comments and blank lines skipped) as
// key -> value; a line that does not read, or a sample twice, fails the test.
inline Samples ParsePrometheusSamples(const std::string& text) {
  Samples samples;
  collectors::ForEachLine(text, [&](std::string_view line, int number) {
    if (line.empty() || line[0] == '#') return;
    const size_t open = line.find('{');
    const size_t close = line.rfind("} ");
    if (open == std::string_view::npos || close == std::string_view::npos) {
      ADD_FAILURE() << "line " << number << ": " << line;
      return;
    }
    SampleLabels labels;
    std::string_view rest = line.substr(open + 1, close - open - 1);
    while (!rest.empty()) {
      const size_t equals = rest.find("=\"");
      const size_t quote = equals == std::string_view::npos ? equals : rest.find('"', equals + 2);
      if (quote == std::string_view::npos) {
        ADD_FAILURE() << "line " << number << ": labels of " << line;
        return;
      }
      labels[std::string(rest.substr(0, equals))] =
          std::string(rest.substr(equals + 2, quote - equals - 2));
      rest.remove_prefix(std::min(rest.size(), quote + 2));  // past '",'
    }
    const std::string value(line.substr(close + 2));
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    EXPECT_EQ(*end, '\0') << "line " << number << ": " << line;
    EXPECT_TRUE(samples.emplace(SampleKey(line.substr(0, open), labels), parsed).second)
        << "line " << number << " twice: " << line;
  });
  return samples;
}

// Every sample of `theirs` in `ours` with its value, and none of `ours` beyond.
inline void ExpectSameSamples(const Samples& theirs, const Samples& ours,
                              std::string_view exporter) {
  for (const auto& [key, value] : theirs) {
    const auto found = ours.find(key);
    if (found == ours.end()) {
      ADD_FAILURE() << exporter << " exports " << key << ", iowatch does not";
      continue;
    }
    EXPECT_EQ(found->second, value) << key;
  }
  for (const auto& [key, value] : ours) {
    EXPECT_TRUE(theirs.contains(key))
        << "iowatch gives " << key << " " << value << ", " << exporter << " does not";
  }
}

}  // namespace iowatch::testing
