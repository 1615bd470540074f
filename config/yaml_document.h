// The one YAML document of a configuration, read without yaml-cpp 0.7's
// LoadAll: on a stream that starts with a flow entry (",") LoadAll's loop
// never ends and grows by a null document per turn
// (https://github.com/jbeder/yaml-cpp/issues/1040, fixed upstream in 2024
// after Debian 12's 0.7.0; fuzz_config found it:
// 240 bytes took check-config past 60 s and 14 GB). Internal to
// iowatch_config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <variant>

namespace iowatch::config::internal {

// What a configuration's YAML holds: no document (empty, or comments only),
// one, or a reason to refuse it at a position.
struct NoDocument {};
struct YamlRefusal {
  YAML::Mark mark;
  std::string message;
};
using YamlDocument = std::variant<NoDocument, YAML::Node, YamlRefusal>;

// Throws YAML::Exception (with its mark) for invalid YAML, as yaml-cpp does.
YamlDocument ReadOneDocument(std::string_view yaml_text);

}  // namespace iowatch::config::internal
