// The YAML walk of the configuration, shared by config_loader.cc (web ...
// log) and probes_config.cc (probes): a Reader walks the document against
// tables of known keys (the schema), so AllConfigKeys, the walk and the error
// messages cannot drift apart, and remembers where each key was, for errors
// that join keys. Scalars are converted by values.h. Internal to
// iowatch_config: only its .cc files include this header, and so yaml-cpp.
// Thread-safety: a Reader belongs to one parse.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/settings.h"
#include "config/values.h"

namespace iowatch::config::internal {

inline constexpr char kDurationWhat[] = R"(a duration like "500ms", "1s" or "15m")";

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

inline std::string Describe(const YAML::Node& node) {
  if (node.IsScalar()) return fmt::format("{:?}", node.Scalar());
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "no value";
}

inline std::string Join(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : fmt::format("{}.{}", path, name);
}

inline YAML::Mark EntryMark(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() || value.Mark().is_null() ? key.Mark() : value.Mark();
}

inline std::string KeyNames(const Key* keys, size_t count) {
  std::string names;
  for (size_t i = 0; i < count; ++i) names += fmt::format("{}{}", i ? ", " : "", keys[i].name);
  return names;
}

// The bundled probes.defaults.options: directory=probes, size=64M,
// ioengine=io_uring, direct=1, runtime=3s, time_based=1.
std::vector<probes::JobOption> DefaultProbeOptions();

// probes.jobs[i] as written; timing it does not set comes from the defaults.
struct ProbeJobDraft {
  std::string path;    // "probes.jobs[1]"
  ProbeJobConfig job;  // name and timing; spec not yet built
  bool every_set = false;
  bool jitter_set = false;
  bool timeout_set = false;
  std::vector<probes::JobOption> options;
  // job_file (absolute: a relative one is made relative to the config file's
  // directory when read) and job_section: the fio job whose options come
  // before `options`.
  std::string job_file;
  std::string job_section;
};

// probes.defaults and probes.jobs as written. Jobs are built once the whole
// document is read, since probes.defaults may come after probes.jobs.
struct ProbesDraft {
  ProbeJobConfig defaults;  // every, jitter, timeout
  bool every_set = false;
  bool jitter_set = false;
  bool timeout_set = false;
  std::vector<probes::JobOption> default_options = DefaultProbeOptions();
  std::optional<std::vector<ProbeJobDraft>> jobs;  // unset: the bundled jobs
};

// Reads values into a Config, keeping the first error (later reads do nothing).
class Reader {
 public:
  explicit Reader(std::string source, std::span<const Setting> settings = {})
      : source_(std::move(source)), settings_(settings) {}

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
    error_ = Error{
        .code = code, .message = std::move(text), .path = source_, .line = line, .column = column};
  }
  void Expected(const Value& v, std::string_view what) {
    Fail(ErrorCode::kParse, v.mark, v.path,
         fmt::format("expected {}, found {}", what, Describe(v.node)));
  }

  // A scalar converted by `convert` (values.h) into `out`; `what` names the
  // type for a node that is not a scalar. No key takes a NUL byte (a
  // double-quoted "\0"): strings end up in paths, HTTP headers, labels and
  // C strings, which would see them cut at it.
  template <typename T, typename Convert>
  void Read(const Value& v, std::string_view what, Convert convert, T& out) {
    if (failed()) return;
    if (!v.node.IsScalar()) return Expected(v, what);
    if (v.node.Scalar().find('\0') != std::string::npos) {
      return Fail(ErrorCode::kInvalidArgument, v.mark, v.path,
                  fmt::format("expected {} without NUL bytes, found {:?}", what, v.node.Scalar()));
    }
    auto value = convert(v.node.Scalar());
    if (!value) return Fail(value.error().code, v.mark, v.path, value.error().message);
    out = std::move(*value);
  }
  void String(const Value& v, std::string& out) {
    Read(
        v, "a string", [](std::string_view s) { return Result<std::string>(s); }, out);
  }
  void Integer(const Value& v, uint32_t min, uint32_t max, uint32_t& out) {
    Read(
        v, fmt::format("an integer from {} to {}", min, max),
        [=](std::string_view s) { return ParseInteger(s, min, max); }, out);
  }
  void Number(const Value& v, double min, double max, double& out) {
    Read(
        v, "a number", [=](std::string_view s) { return ParseNumber(s, min, max, true); }, out);
  }
  void Duration(const Value& v, std::chrono::milliseconds min, std::chrono::milliseconds& out,
                std::chrono::milliseconds max = kMaxConfigDuration) {
    Read(
        v, kDurationWhat,
        [min, max](std::string_view s) { return ParseDurationBetween(s, min, max); }, out);
  }

  // Visits the entries of a map in file order; null (a section with every
  // key commented out) means all defaults.
  // Keys the schema does not have are looked up among the settings: a leaf
  // whose key is one, or a section some of them are under.
  void Walk(const Value& v, const Key* keys, size_t count, Config& config);
  void Users(const Value& v, std::map<std::string, std::string>& out);

  // probes_config.cc: the probes section's maps and lists.
  void JobOptions(const Value& v, std::vector<probes::JobOption>& out);
  void MetricNames(const Value& v, std::vector<std::string>& out);
  void Jobs(const Value& v, Config& config);
  ProbesDraft& probes() { return probes_; }
  ProbeJobDraft& job() { return *job_; }
  const std::string& source() const { return source_; }

 private:
  // The settings' own keys right under `path`, in their order ("scsi" under
  // "collectors").
  std::vector<std::string> SettingNamesUnder(std::string_view path) const;
  const Setting* SettingAt(std::string_view path) const;
  void ReadSetting(const Setting& setting, const Value& v, Config& config);
  // The schema's names and the settings' at this level, for errors.
  std::string NamesAt(std::string_view path, const Key* keys, size_t count) const;

  std::string source_;
  std::span<const Setting> settings_;
  std::optional<Error> error_;
  std::map<std::string, YAML::Mark> marks_;
  std::vector<std::string> keys_seen_;
  ProbesDraft probes_;
  ProbeJobDraft* job_ = nullptr;  // the job being walked
};

// The setting a key reads into: a member of Config through its sections,
// e.g. At<&Config::cgroups, &CgroupConfig::enabled>.
template <auto... kPath>
constexpr auto& At(Config& c) {
  return (c.*....*kPath);
}

// A key's row by the kind of value it takes, each one line in a schema table
// (config_loader.cc): the reading and its error message are the kind's.
template <auto... kPath>
constexpr Key BoolKey(std::string_view name) {
  return {name, [](Reader& r, const Value& v, Config& c) {
            r.Read(v, "true or false", ParseBool, At<kPath...>(c));
          }};
}
template <auto... kPath>
constexpr Key RegexKey(std::string_view name) {
  return {name, [](Reader& r, const Value& v, Config& c) {
            r.Read(v, "a string", ParseRegex, At<kPath...>(c));
          }};
}
// A duration of at least kMinMs milliseconds.
template <int64_t kMinMs, auto... kPath>
constexpr Key DurationKey(std::string_view name) {
  return {name, [](Reader& r, const Value& v, Config& c) {
            r.Duration(v, std::chrono::milliseconds(kMinMs), At<kPath...>(c));
          }};
}
// An integer from kMin to kMax.
template <uint32_t kMin, uint32_t kMax, auto... kPath>
constexpr Key IntegerKey(std::string_view name) {
  return {name,
          [](Reader& r, const Value& v, Config& c) { r.Integer(v, kMin, kMax, At<kPath...>(c)); }};
}
// A number from kMin to kMax.
template <double kMin, double kMax, auto... kPath>
constexpr Key NumberKey(std::string_view name) {
  return {name,
          [](Reader& r, const Value& v, Config& c) { r.Number(v, kMin, kMax, At<kPath...>(c)); }};
}

// The probes section's keys (probes_config.cc), in documentation order.
inline constexpr size_t kProbesKeyCount = 10;
extern const Key kProbesKeys[kProbesKeyCount];

// Builds probes.jobs from the draft once the whole document is read (each
// job over probes.defaults, then checked); the first error goes to `r`.
void BuildProbeJobs(Reader& r, Config& config);

}  // namespace iowatch::config::internal
