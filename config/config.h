// Config: the daemon's settings, read from a YAML file (config/iowatch.yaml
// lists every key with its default and a comment; docs/configuration.md is
// the reference). A default-constructed Config is the built-in defaults, and
// an empty or comment-only file means exactly those.
//
// Parsing is strict: unknown keys, duplicate keys, wrong types and values out
// of range are errors, each located at the offending node ("file:line:column:
// dotted.key: expected ..., found ..."). Parsing checks values on their own
// (a regex compiles, an address has a port); it opens no file and binds
// nothing. Errors are kParse for invalid YAML and values in the wrong syntax,
// kInvalidArgument for well-formed values that are not allowed.
// The probes section holds the scheduled probe jobs, each already merged with
// probes.defaults and checked by probes::ValidateJobSpec, so a loaded config
// never carries a job that cannot run for a reason the text alone shows.
// Thread-safety: plain values and pure functions; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/settings.h"
#include "probes/spec/job_spec.h"
#include "probes/verdicts/baseline.h"

namespace iowatch::config {

struct WebConfig {
  std::string listen_address = "127.0.0.1:9860";   // see ParseListenAddress
  std::chrono::milliseconds read_timeout{10000};   // the whole request head must arrive within this
  std::chrono::milliseconds write_timeout{10000};  // the whole response must be sent within this
  std::chrono::milliseconds idle_timeout{60000};   // keep-alive connection with no request
  uint32_t max_connections = 64;
  uint32_t max_header_bytes = 8192;  // request line plus headers
  std::string tls_cert_file;         // PEM; TLS is on when both files are set
  std::string tls_key_file;
  // User name -> bcrypt hash ("$2y$10$..."), as in Prometheus' web config;
  // empty means no authentication.
  std::map<std::string, std::string> basic_auth_users;

  bool operator==(const WebConfig&) const = default;
};

struct SamplingConfig {
  std::chrono::milliseconds interval{1000};  // at least 100ms
  std::chrono::milliseconds window{60000};   // at least `interval`
  bool operator==(const SamplingConfig&) const = default;
};

// Which block devices to report: ECMAScript regular expressions matched
// against the whole kernel name ("sda", "nvme0n1", "dm-0"), as
// collectors::DeviceFilter applies them.
struct DeviceConfig {
  std::string include;                               // empty: every device
  std::string exclude = "^(loop|ram|zram|fd)\\d+$";  // empty: none excluded
  bool partitions = false;                           // report partitions too
  bool operator==(const DeviceConfig&) const = default;
};

// Per-cgroup I/O (collectors/cgroup/cgroup_io.h): which cgroups are
// reported, and the cap on cgroup x device series.
struct CgroupConfig {
  bool enabled = true;
  uint32_t depth = 2;          // levels below the root: 2 = system.slice/postgresql.service
  std::string include;         // RE2 on the path relative to the root; empty: every cgroup
  std::string exclude;         // empty: none excluded
  uint32_t max_series = 2000;  // cgroup x device pairs exported at most
  // How often every process's /proc/PID/io is read; 0: never.
  std::chrono::milliseconds process_interval{10000};
  bool operator==(const CgroupConfig&) const = default;
};

// The passive judge (daemon/passive/): every whole disk of the device
// selection judged by the I/O it already does, minute by minute, against
// its own latency under its own load.
struct PassiveConfig {
  bool enabled = true;
  std::string exclude = "(dm-|md).*";  // RE2, whole kernel name: not judged
  // How long the store keeps each judged window (the ones a model learned
  // from, which a restart refits it from, are kept whatever their age).
  std::chrono::milliseconds keep_windows{std::chrono::hours(24)};
  // Diskstats windows too for disks judged by the device stage (a second
  // series per op, source "diskstats"): to compare the two sources.
  bool shadow_diskstats = false;
  bool operator==(const PassiveConfig&) const = default;
};

// One scheduled probe (probes.jobs[]) with probes.defaults applied.
struct ProbeJobConfig {
  std::string name;  // unique; also names the probe file: <directory>/<name>.0.0
  std::chrono::milliseconds every{15 * 60 * 1000};
  std::chrono::milliseconds jitter{60 * 1000};   // at most every / 2
  std::chrono::milliseconds timeout{60 * 1000};  // more than runtime + ramp_time
  // defaults.options, then the job's options, validated; spec.name == name.
  // A relative directory or filename is kept as written: it is relative to
  // the state directory, which the command line may still change, so it is
  // resolved where the job runs (ResolveProbeTarget), not here.
  probes::JobSpec spec;
  // The metrics its runs are judged on (BaselineMetrics() names); empty:
  // probes.baseline.metrics.
  std::vector<std::string> judge;

  bool operator==(const ProbeJobConfig&) const = default;
};

// The bundled job set, what probes.jobs means when a file does not set it:
// 4k random read QD1, 4k random write QD1 and 1M sequential read QD8, each a
// 3 s direct io_uring run on a 64M file under <state_dir>/probes, every 15
// minutes (jitter 1m, timeout 1m).
std::vector<ProbeJobConfig> DefaultProbeJobs();

struct ProbesConfig {
  bool enabled = true;
  uint32_t max_concurrent = 1;  // probes at once across all devices; never two on one device
  double busy_threshold = 0.5;  // skip while the device's utilisation over busy_window exceeds it
  std::chrono::milliseconds busy_window{60 * 1000};
  std::chrono::milliseconds busy_retry{60 * 1000};  // a skipped slot is tried again after this
  // Busy-skips one slot may take before it is given up (counted as a run with
  // result "skipped"; the job waits for its next regular slot). 1: no retry.
  uint32_t max_skips = 10;
  std::chrono::milliseconds retention{90LL * 24 * 3600 * 1000};  // runs older than this are pruned
  probes::BaselinePolicy baseline;
  std::vector<ProbeJobConfig> jobs = DefaultProbeJobs();  // empty: no probes run

  bool operator==(const ProbesConfig&) const = default;
};

struct Config {
  WebConfig web;
  SamplingConfig sampling;
  DeviceConfig devices;
  CgroupConfig cgroups;
  PassiveConfig passive;
  std::string procfs = "/proc";              // yaml: paths.procfs
  std::string sysfs = "/sys";                // yaml: paths.sysfs
  std::string udev_data = "/run/udev/data";  // yaml: paths.udev_data
  std::string state_dir = "/var/lib/iowatch";
  std::string log_level = "info";  // yaml: log.level; trace|debug|info|warn|error|off
  ProbesConfig probes;
  // The values of the settings declared outside this file (settings.h) that
  // the file set.
  SettingValues settings;
  std::string source;  // the file it was read from, "" for the defaults

  bool operator==(const Config&) const = default;
};

// Parses a whole document. `source_name` names it in errors and becomes
// Config::source. Paths are kept as written. `settings` are the keys
// declared outside this file (the sources' rows: daemon::RegisteredSettings),
// read beside the schema's own; a key neither knows is an error.
Result<Config> ParseConfig(std::string_view yaml_text, std::string_view source_name,
                           std::span<const Setting> settings = {});

// Reads and parses a file. Relative paths in it (paths.*, state_dir,
// web.tls.*) are resolved against the file's directory, as Prometheus does;
// a probe job's relative directory or filename stays relative to state_dir.
// An unreadable file is an error carrying the path and the errno text.
Result<Config> LoadConfigFile(const std::filesystem::path& path, std::span<const Setting> settings);

// The job's spec with a relative directory or filename placed under
// `state_dir` ("probes" -> "<state_dir>/probes"); absolute paths unchanged.
probes::JobSpec ResolveProbeTarget(probes::JobSpec spec, const std::filesystem::path& state_dir);

// Every key a config file may hold, dotted ("web.tls.cert_file"), in
// documentation order: each of `settings` at the end of the deepest section
// of the schema it is under ("collectors.scsi.enabled" at the end of
// "collectors"), in their order; one under none, last. Sections ("web",
// "web.tls") are not listed.
std::vector<std::string> AllConfigKeys(std::span<const Setting> settings = {});

// The keys of AllConfigKeys() that `yaml_text` sets, in file order, or the
// error ParseConfig would give. For `check-config` and for tests that the
// bundled file and the reference are complete.
Result<std::vector<std::string>> ConfigKeysIn(std::string_view yaml_text,
                                              std::string_view source_name,
                                              std::span<const Setting> settings = {});

}  // namespace iowatch::config
