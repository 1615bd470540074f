// The Reader's walk, the schema of every section but probes (which is
// probes_config.cc's), and the parse of a whole document. yaml_reader.h says
// how the walk works.
#include <algorithm>
#include <set>

#include "common/listen_address.h"
#include "common/units.h"
#include "config/yaml_document.h"
#include "config/yaml_reader.h"

namespace iowatch::config {
namespace internal {

void Reader::Walk(const Value& v, const Key* keys, size_t count, Config& config) {
  if (failed() || v.node.IsNull()) return;
  if (!v.node.IsMap()) {
    return Expected(v, fmt::format("a map with keys {}", NamesAt(v.path, keys, count)));
  }
  std::set<std::string> seen;
  for (const auto& entry : v.node) {
    if (!entry.first.IsScalar()) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), v.path,
                  fmt::format("expected a key name, found {}", Describe(entry.first)));
    }
    const std::string& name = entry.first.Scalar();
    const Value child{entry.second, Join(v.path, name), EntryMark(entry.first, entry.second)};
    const Key* key = nullptr;
    for (size_t i = 0; i < count; ++i) {
      if (keys[i].name == name) key = &keys[i];
    }
    const Setting* setting = key == nullptr ? SettingAt(child.path) : nullptr;
    const bool setting_section =
        key == nullptr && setting == nullptr && !SettingNamesUnder(child.path).empty();
    if (key == nullptr && setting == nullptr && !setting_section) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), child.path,
                  fmt::format("unknown key; expected one of {}", NamesAt(v.path, keys, count)));
    }
    if (!seen.insert(name).second) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), child.path, "duplicate key");
    }
    marks_[child.path] = child.mark;
    if (setting != nullptr) {
      keys_seen_.push_back(child.path);
      ReadSetting(*setting, child, config);
    } else if (setting_section) {
      Walk(child, nullptr, 0, config);
    } else if (key->read != nullptr) {
      // A job's keys are not config keys ("probes.jobs" is).
      if (child.path.find('[') == std::string::npos) keys_seen_.push_back(child.path);
      key->read(*this, child, config);
    } else {
      Walk(child, key->children, key->child_count, config);
    }
    if (failed()) return;
  }
}

std::vector<std::string> Reader::SettingNamesUnder(std::string_view path) const {
  std::vector<std::string> names;
  for (const Setting& setting : settings_) {
    const std::string_view key = setting.key;
    if (!path.empty() &&
        !(key.starts_with(path) && key.size() > path.size() && key[path.size()] == '.')) {
      continue;
    }
    std::string_view rest = path.empty() ? key : key.substr(path.size() + 1);
    std::string name(rest.substr(0, rest.find('.')));
    if (std::ranges::find(names, name) == names.end()) names.push_back(std::move(name));
  }
  return names;
}

const Setting* Reader::SettingAt(std::string_view path) const {
  const auto it = std::ranges::find(settings_, path, &Setting::key);
  return it == settings_.end() ? nullptr : &*it;
}

std::string Reader::NamesAt(std::string_view path, const Key* keys, size_t count) const {
  std::string names = KeyNames(keys, count);
  for (const std::string& name : SettingNamesUnder(path)) {
    const bool in_schema =
        std::any_of(keys, keys + count, [&](const Key& k) { return k.name == name; });
    if (!in_schema) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  }
  return names;
}

// What a setting's type expects, as the schema's own keys of that type say it.
std::string SettingWhat(const Setting& setting) {
  switch (setting.type) {
    case SettingType::kBool:
      return "true or false";
    case SettingType::kDuration:
      return kDurationWhat;
    case SettingType::kRegex:
      return "a string";
    case SettingType::kInteger:
      return fmt::format("an integer from {} to {}", setting.min, setting.max);
    case SettingType::kNumber:
      return "a number";
    case SettingType::kPath:
      return "a path";
  }
  return "a value";
}

void Reader::ReadSetting(const Setting& setting, const Value& v, Config& config) {
  std::optional<SettingValue> value;
  Read(
      v, SettingWhat(setting),
      [&](std::string_view text) -> Result<std::optional<SettingValue>> {
        auto parsed = ParseSetting(setting, text);
        if (!parsed) return ErrorOf(parsed);
        return std::optional<SettingValue>(std::move(*parsed));
      },
      value);
  if (value) config.settings.Set(setting, std::move(*value));
}

void Reader::Users(const Value& v, std::map<std::string, std::string>& out) {
  if (failed() || v.node.IsNull()) return;
  if (!v.node.IsMap()) return Expected(v, "a map of user names to bcrypt hashes");
  std::map<std::string, std::string> users;
  for (const auto& entry : v.node) {
    std::string name;
    Read(Value{entry.first, v.path, entry.first.Mark()}, "a user name", ParseUserName, name);
    const Value hash{entry.second, Join(v.path, name), EntryMark(entry.first, entry.second)};
    if (!failed() && users.contains(name)) {
      Fail(ErrorCode::kParse, entry.first.Mark(), hash.path, "duplicate user");
    }
    Read(hash, "a bcrypt hash", ParseBcryptHash, users[name]);
    if (failed()) return;
  }
  out = std::move(users);
}

}  // namespace internal

namespace {

using internal::BoolKey;
using internal::BuildProbeJobs;
using internal::DurationKey;
using internal::IntegerKey;
using internal::Join;
using internal::Key;
using internal::kProbesKeys;
using internal::Reader;
using internal::ReadOneDocument;
using internal::RegexKey;
using internal::Section;
using internal::Value;
using internal::YamlDocument;
using internal::YamlRefusal;
using std::chrono::milliseconds;

// A path that may be empty (TLS off when both are); a NUL byte is refused
// here, at its key, rather than cutting the path the kernel sees.
void ReadOptionalPath(Reader& r, const Value& v, std::string& out) {
  r.Read(
      v, "a path",
      [](std::string_view text) { return text.empty() ? Result<std::string>() : ParsePath(text); },
      out);
}

// The schema, in documentation order (AllConfigKeys).
constexpr Key kTlsKeys[] = {
    {"cert_file",
     [](Reader& r, const Value& v, Config& c) { ReadOptionalPath(r, v, c.web.tls_cert_file); }},
    {"key_file",
     [](Reader& r, const Value& v, Config& c) { ReadOptionalPath(r, v, c.web.tls_key_file); }},
};
constexpr Key kWebKeys[] = {
    {"listen_address",
     [](Reader& r, const Value& v, Config& c) {
       const auto check = [](std::string_view s) -> Result<std::string> {
         if (const auto address = ParseListenAddress(s); !address) {
           return ErrorOf(address);
         }
         return std::string(s);
       };
       r.Read(v, R"("host:port")", check, c.web.listen_address);
     }},
    DurationKey<1, &Config::web, &WebConfig::read_timeout>("read_timeout"),
    DurationKey<1, &Config::web, &WebConfig::write_timeout>("write_timeout"),
    DurationKey<1, &Config::web, &WebConfig::idle_timeout>("idle_timeout"),
    IntegerKey<1, 65535, &Config::web, &WebConfig::max_connections>("max_connections"),
    {"max_header_bytes",
     [](Reader& r, const Value& v, Config& c) {
       r.Read(
           v, R"(a size from 1024 to 1048576 bytes, like "8192" or "8k")",
           [](std::string_view s) { return ParseSizeBetween(s, 1024, 1 << 20); },
           c.web.max_header_bytes);
     }},
    Section("tls", kTlsKeys),
    {"basic_auth_users",
     [](Reader& r, const Value& v, Config& c) { r.Users(v, c.web.basic_auth_users); }},
};
constexpr Key kSamplingKeys[] = {
    DurationKey<100, &Config::sampling, &SamplingConfig::interval>("interval"),
    DurationKey<100, &Config::sampling, &SamplingConfig::window>("window"),
};
constexpr Key kDeviceKeys[] = {
    RegexKey<&Config::devices, &DeviceConfig::include>("include"),
    RegexKey<&Config::devices, &DeviceConfig::exclude>("exclude"),
    BoolKey<&Config::devices, &DeviceConfig::partitions>("partitions"),
};
constexpr Key kCgroupKeys[] = {
    BoolKey<&Config::cgroups, &CgroupConfig::enabled>("enabled"),
    IntegerKey<1, 16, &Config::cgroups, &CgroupConfig::depth>("depth"),
    RegexKey<&Config::cgroups, &CgroupConfig::include>("include"),
    RegexKey<&Config::cgroups, &CgroupConfig::exclude>("exclude"),
    IntegerKey<1, 1000000, &Config::cgroups, &CgroupConfig::max_series>("max_series"),
    DurationKey<0, &Config::cgroups, &CgroupConfig::process_interval>("process_interval"),
};
constexpr Key kPassiveKeys[] = {
    BoolKey<&Config::passive, &PassiveConfig::enabled>("enabled"),
    RegexKey<&Config::passive, &PassiveConfig::exclude>("exclude"),
    DurationKey<60'000, &Config::passive, &PassiveConfig::keep_windows>("keep_windows"),
    BoolKey<&Config::passive, &PassiveConfig::shadow_diskstats>("shadow_diskstats"),
};
void ReadPath(Reader& r, const Value& v, std::string& out) {
  r.Read(v, "a non-empty path", ParsePath, out);
}
constexpr Key kPathKeys[] = {
    {"procfs", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.procfs); }},
    {"sysfs", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.sysfs); }},
    {"udev_data", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.udev_data); }},
};
constexpr Key kLogKeys[] = {
    {"level", [](Reader& r, const Value& v,
                 Config& c) { r.Read(v, "a string", ParseLogLevel, c.log_level); }},
};
constexpr Key kRootKeys[] = {
    Section("web", kWebKeys),
    Section("sampling", kSamplingKeys),
    Section("devices", kDeviceKeys),
    Section("cgroups", kCgroupKeys),
    Section("passive", kPassiveKeys),
    // Every key below it is a source's setting (settings.h): the section
    // places them among the others.
    Key{"collectors"},
    Section("paths", kPathKeys),
    {"state_dir", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.state_dir); }},
    Section("log", kLogKeys),
    Section("probes", kProbesKeys),
};
constexpr size_t kRootCount = std::size(kRootKeys);

// Rules that join two keys, checked once every key is read. Each points at
// the key the file sets (the other may be a default).
void CheckCombinations(Reader& r, const Config& c) {
  const WebConfig& web = c.web;
  if (web.tls_cert_file.empty() != web.tls_key_file.empty()) {
    r.Fail(ErrorCode::kInvalidArgument, r.MarkOf("web.tls"), "web.tls",
           fmt::format("expected both cert_file and key_file, found only {}",
                       web.tls_cert_file.empty() ? "key_file" : "cert_file"));
  }
  const SamplingConfig& s = c.sampling;
  if (s.window < s.interval) {
    const bool window_set = !r.MarkOf("sampling.window").is_null();
    const char* key = window_set ? "sampling.window" : "sampling.interval";
    const std::string message =
        window_set ? fmt::format("expected at least sampling.interval ({}), found {}",
                                 FormatDuration(s.interval), FormatDuration(s.window))
                   : fmt::format("expected at most sampling.window ({}), found {}",
                                 FormatDuration(s.window), FormatDuration(s.interval));
    r.Fail(ErrorCode::kInvalidArgument, r.MarkOf(key), key, message);
  }
  // The busy check needs at least half its window in samples.
  const ProbesConfig& p = c.probes;
  if (!r.failed() && p.busy_window < 2 * s.interval) {
    const bool busy_set = !r.MarkOf("probes.busy_window").is_null();
    const char* key = busy_set ? "probes.busy_window" : "sampling.interval";
    const std::string message =
        busy_set ? fmt::format("expected at least twice sampling.interval ({}), found {}",
                               FormatDuration(2 * s.interval), FormatDuration(p.busy_window))
                 : fmt::format("expected at most half of probes.busy_window ({}), found {}",
                               FormatDuration(p.busy_window), FormatDuration(s.interval));
    r.Fail(ErrorCode::kInvalidArgument, r.MarkOf(key), key, message);
  }
}

Result<Config> Parse(std::string_view yaml_text, std::string_view source_name,
                     std::span<const Setting> settings, std::vector<std::string>* keys_seen) {
  Config config;
  config.source = std::string(source_name);
  Reader reader(config.source, settings);
  try {
    const YamlDocument document = ReadOneDocument(yaml_text);
    if (const auto* refusal = std::get_if<YamlRefusal>(&document)) {
      reader.Fail(ErrorCode::kParse, refusal->mark, "", refusal->message);
    } else if (const auto* root = std::get_if<YAML::Node>(&document)) {
      reader.Walk(Value{*root, "", root->Mark()}, kRootKeys, kRootCount, config);
    }
  } catch (const YAML::Exception& e) {  // ParserException for invalid YAML
    reader.Fail(ErrorCode::kParse, e.mark, "", fmt::format("invalid YAML: {}", e.msg));
  }
  if (!reader.failed()) BuildProbeJobs(reader, config);
  if (!reader.failed()) CheckCombinations(reader, config);
  if (reader.failed()) return std::unexpected(reader.error());
  if (keys_seen != nullptr) *keys_seen = reader.keys_seen();
  return config;
}

// The settings under `section` not placed yet, in their order.
void PlaceSettings(std::string_view section, std::span<const Setting> settings,
                   std::vector<bool>& placed, std::vector<std::string>& out) {
  for (size_t i = 0; i < settings.size(); ++i) {
    const std::string_view key = settings[i].key;
    if (placed[i] || !key.starts_with(section) || key.size() <= section.size() ||
        key[section.size()] != '.') {
      continue;
    }
    out.emplace_back(key);
    placed[i] = true;
  }
}

// The schema's keys in order, each section followed by the settings under it
// that no deeper section of the schema holds.
void CollectKeys(const Key* keys, size_t count, const std::string& path,
                 std::span<const Setting> settings, std::vector<bool>& placed,
                 std::vector<std::string>& out) {
  for (size_t i = 0; i < count; ++i) {
    const std::string child = Join(path, keys[i].name);
    if (keys[i].read != nullptr) {
      out.push_back(child);
      continue;
    }
    CollectKeys(keys[i].children, keys[i].child_count, child, settings, placed, out);
    PlaceSettings(child, settings, placed, out);
  }
}

}  // namespace

Result<Config> ParseConfig(std::string_view yaml_text, std::string_view source_name,
                           std::span<const Setting> settings) {
  return Parse(yaml_text, source_name, settings, nullptr);
}

std::vector<std::string> AllConfigKeys(std::span<const Setting> settings) {
  std::vector<std::string> keys;
  std::vector<bool> placed(settings.size(), false);
  CollectKeys(kRootKeys, kRootCount, "", settings, placed, keys);
  for (size_t i = 0; i < settings.size(); ++i) {
    if (!placed[i]) keys.emplace_back(settings[i].key);  // under no section of the schema
  }
  return keys;
}

Result<std::vector<std::string>> ConfigKeysIn(std::string_view yaml_text,
                                              std::string_view source_name,
                                              std::span<const Setting> settings) {
  std::vector<std::string> keys;
  const auto config = Parse(yaml_text, source_name, settings, &keys);
  if (!config) return ErrorOf(config);
  return keys;
}

}  // namespace iowatch::config
