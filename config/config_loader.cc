// The one file that includes yaml-cpp: walks the document against a table of
// known keys (the schema), so AllConfigKeys, the walk and the error messages
// cannot drift apart. Scalars are converted by values.h.
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>

#include "config/config.h"
#include "config/listen_address.h"
#include "common/units.h"
#include "config/values.h"

namespace iowatch::config {
namespace {

using std::chrono::milliseconds;

constexpr char kDurationWhat[] = R"(a duration like "500ms", "1s" or "15m")";

// A node being read, its dotted key path and where errors point: the value,
// or its key when the value is empty (yaml-cpp marks an empty value at the
// next token, often on the following line).
struct Value {
  YAML::Node node;
  std::string path;
  YAML::Mark mark;
};

class Reader;
using ReadFn = void (*)(Reader&, const Value&, Config&);

// A schema entry: a leaf with `read`, or a section with `children`.
struct Key {
  std::string_view name;
  ReadFn read = nullptr;
  const Key* children = nullptr;
  size_t child_count = 0;
};

template <size_t N>
constexpr Key Section(std::string_view name, const Key (&children)[N]) {
  return Key{name, nullptr, children, N};
}

std::string Describe(const YAML::Node& node) {
  if (node.IsScalar()) return fmt::format("{:?}", node.Scalar());
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "no value";
}

std::string Join(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
}

YAML::Mark EntryMark(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() || value.Mark().is_null() ? key.Mark() : value.Mark();
}

std::string KeyNames(const Key* keys, size_t count) {
  std::string names;
  for (size_t i = 0; i < count; ++i) names += fmt::format("{}{}", i ? ", " : "", keys[i].name);
  return names;
}

// Reads values into a Config, keeping the first error (later reads do nothing).
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }
  const std::vector<std::string>& keys_seen() const { return keys_seen_; }
  YAML::Mark MarkOf(const std::string& path) const {
    const auto it = marks_.find(path);
    return it == marks_.end() ? YAML::Mark::null_mark() : it->second;
  }

  void Fail(ErrorCode code, const YAML::Mark& mark, std::string_view path,
            std::string_view message) {
    if (error_) return;
    const int line = mark.is_null() ? 0 : mark.line + 1;  // yaml-cpp counts from 0
    const int column = mark.is_null() ? 0 : mark.column + 1;
    std::string text = path.empty() ? std::string(message) : fmt::format("{}: {}", path, message);
    error_ = Error{code, std::move(text), source_, line, 0, column};
  }
  void Expected(const Value& v, std::string_view what) {
    Fail(ErrorCode::kParse, v.mark, v.path,
         fmt::format("expected {}, found {}", what, Describe(v.node)));
  }

  // A scalar converted by `convert` (values.h) into `out`; `what` names the
  // type for a node that is not a scalar.
  template <typename T, typename Convert>
  void Read(const Value& v, std::string_view what, Convert convert, T& out) {
    if (failed()) return;
    if (!v.node.IsScalar()) return Expected(v, what);
    auto value = convert(v.node.Scalar());
    if (!value) return Fail(value.error().code, v.mark, v.path, value.error().message);
    out = std::move(*value);
  }
  void String(const Value& v, std::string& out) {
    Read(
        v, "a string", [](std::string_view s) { return Result<std::string>(s); }, out);
  }
  void Duration(const Value& v, milliseconds min, milliseconds& out) {
    Read(
        v, kDurationWhat, [min](std::string_view s) { return ParseDurationAtLeast(s, min); }, out);
  }

  // Visits the entries of a map in file order; null (a section with every
  // key commented out) means all defaults.
  void Walk(const Value& v, const Key* keys, size_t count, Config& config);
  void Users(const Value& v, std::map<std::string, std::string>& out);

 private:
  std::string source_;
  std::optional<Error> error_;
  std::map<std::string, YAML::Mark> marks_;
  std::vector<std::string> keys_seen_;
};

void Reader::Walk(const Value& v, const Key* keys, size_t count, Config& config) {
  if (failed() || v.node.IsNull()) return;
  if (!v.node.IsMap()) return Expected(v, fmt::format("a map with keys {}", KeyNames(keys, count)));
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
    if (key == nullptr) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), child.path,
                  fmt::format("unknown key; expected one of {}", KeyNames(keys, count)));
    }
    if (!seen.insert(name).second) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), child.path, "duplicate key");
    }
    marks_[child.path] = child.mark;
    if (key->read != nullptr) {
      keys_seen_.push_back(child.path);
      key->read(*this, child, config);
    } else {
      Walk(child, key->children, key->child_count, config);
    }
    if (failed()) return;
  }
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

// The schema, in documentation order (AllConfigKeys).
constexpr Key kTlsKeys[] = {
    {"cert_file", [](Reader& r, const Value& v, Config& c) { r.String(v, c.web.tls_cert_file); }},
    {"key_file", [](Reader& r, const Value& v, Config& c) { r.String(v, c.web.tls_key_file); }},
};
constexpr Key kWebKeys[] = {
    {"listen_address",
     [](Reader& r, const Value& v, Config& c) {
       const auto check = [](std::string_view s) -> Result<std::string> {
         if (const auto address = ParseListenAddress(s); !address) {
           return std::unexpected(address.error());
         }
         return std::string(s);
       };
       r.Read(v, R"("host:port")", check, c.web.listen_address);
     }},
    {"read_timeout", [](Reader& r, const Value& v,
                        Config& c) { r.Duration(v, milliseconds(1), c.web.read_timeout); }},
    {"write_timeout", [](Reader& r, const Value& v,
                         Config& c) { r.Duration(v, milliseconds(1), c.web.write_timeout); }},
    {"idle_timeout", [](Reader& r, const Value& v,
                        Config& c) { r.Duration(v, milliseconds(1), c.web.idle_timeout); }},
    {"max_connections",
     [](Reader& r, const Value& v, Config& c) {
       r.Read(
           v, "an integer from 1 to 65535",
           [](std::string_view s) { return ParseInteger(s, 1, 65535); }, c.web.max_connections);
     }},
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
    {"interval", [](Reader& r, const Value& v,
                    Config& c) { r.Duration(v, milliseconds(100), c.sampling.interval); }},
    {"window", [](Reader& r, const Value& v,
                  Config& c) { r.Duration(v, milliseconds(100), c.sampling.window); }},
};
constexpr Key kDeviceKeys[] = {
    {"include", [](Reader& r, const Value& v,
                   Config& c) { r.Read(v, "a string", ParseRegex, c.devices.include); }},
    {"exclude", [](Reader& r, const Value& v,
                   Config& c) { r.Read(v, "a string", ParseRegex, c.devices.exclude); }},
    {"partitions", [](Reader& r, const Value& v,
                      Config& c) { r.Read(v, "true or false", ParseBool, c.devices.partitions); }},
};
void ReadPath(Reader& r, const Value& v, std::string& out) {
  r.Read(v, "a non-empty path", ParsePath, out);
}
constexpr Key kPathKeys[] = {
    {"procfs", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.procfs); }},
    {"sysfs", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.sysfs); }},
};
constexpr Key kLogKeys[] = {
    {"level", [](Reader& r, const Value& v,
                 Config& c) { r.Read(v, "a string", ParseLogLevel, c.log_level); }},
};
constexpr Key kRootKeys[] = {
    Section("web", kWebKeys),
    Section("sampling", kSamplingKeys),
    Section("devices", kDeviceKeys),
    Section("paths", kPathKeys),
    {"state_dir", [](Reader& r, const Value& v, Config& c) { ReadPath(r, v, c.state_dir); }},
    Section("log", kLogKeys),
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
}

Result<Config> Parse(std::string_view yaml_text, std::string_view source_name,
                     std::vector<std::string>* keys_seen) {
  Config config;
  config.source = std::string(source_name);
  Reader reader(config.source);
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(yaml_text));
    if (documents.size() > 1) {
      reader.Fail(ErrorCode::kParse, documents[1].Mark(), "",
                  "expected one YAML document, found more");
    } else if (documents.size() == 1) {  // none: empty or comments only
      reader.Walk(Value{documents[0], "", documents[0].Mark()}, kRootKeys, kRootCount, config);
    }
  } catch (const YAML::Exception& e) {  // ParserException for invalid YAML
    reader.Fail(ErrorCode::kParse, e.mark, "", fmt::format("invalid YAML: {}", e.msg));
  }
  if (!reader.failed()) CheckCombinations(reader, config);
  if (reader.failed()) return std::unexpected(reader.error());
  if (keys_seen != nullptr) *keys_seen = reader.keys_seen();
  return config;
}

void CollectKeys(const Key* keys, size_t count, const std::string& path,
                 std::vector<std::string>& out) {
  for (size_t i = 0; i < count; ++i) {
    const std::string child = Join(path, keys[i].name);
    if (keys[i].read != nullptr) out.push_back(child);
    CollectKeys(keys[i].children, keys[i].child_count, child, out);
  }
}

}  // namespace

Result<Config> ParseConfig(std::string_view yaml_text, std::string_view source_name) {
  return Parse(yaml_text, source_name, nullptr);
}

std::vector<std::string> AllConfigKeys() {
  std::vector<std::string> keys;
  CollectKeys(kRootKeys, kRootCount, "", keys);
  return keys;
}

Result<std::vector<std::string>> ConfigKeysIn(std::string_view yaml_text,
                                              std::string_view source_name) {
  std::vector<std::string> keys;
  const auto config = Parse(yaml_text, source_name, &keys);
  if (!config) return std::unexpected(config.error());
  return keys;
}

}  // namespace iowatch::config
