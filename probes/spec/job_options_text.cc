// ToJobOptions and JobFingerprint (declared in job_spec.h): a JobSpec
// written back as canonical fio options.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/spec/job_option_values.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {
namespace {

using std::chrono::nanoseconds;

// The inverse of ParseOnePath.
std::string EscapePath(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string FormatSize(uint64_t bytes) {
  constexpr std::string_view kSuffixes = "kmgtp";
  std::string_view suffix;
  for (size_t i = 0; bytes != 0 && bytes % 1024 == 0 && i < kSuffixes.size(); ++i) {
    bytes /= 1024;
    suffix = kSuffixes.substr(i, 1);
  }
  return fmt::format("{}{}", bytes, suffix);
}

// The largest unit that divides `time` exactly; times are whole microseconds
// (ValidateJobSpec), fio's resolution.
std::string FormatTime(nanoseconds time) {
  if (time == nanoseconds(0)) return "0";
  for (const internal::TimeUnit& unit : internal::kTimeUnits) {
    if (time % unit.length == nanoseconds(0)) {
      return fmt::format("{}{}", time / unit.length, unit.name);
    }
  }
  return fmt::format("{}us", time / std::chrono::microseconds(1));
}

}  // namespace

std::vector<JobOption> ToJobOptions(const JobSpec& spec) {
  const JobSpec defaults;
  std::vector<JobOption> out;
  const auto add = [&](std::string_view name, std::string value) {
    out.push_back(JobOption{std::string(name), std::move(value)});
  };
  add("name", spec.name);
  if (!spec.filename.empty()) add("filename", EscapePath(spec.filename));
  if (!spec.directory.empty()) add("directory", EscapePath(spec.directory));
  add("rw", std::string(ToString(spec.rw)));
  add("bs", FormatSize(spec.block_size));
  add("ioengine", std::string(ToString(spec.engine)));
  add("iodepth", std::to_string(spec.iodepth));
  add("direct", spec.direct ? "1" : "0");
  if (spec.iodepth_batch_submit != defaults.iodepth_batch_submit) {
    add("iodepth_batch_submit", std::to_string(spec.iodepth_batch_submit));
  }
  if (spec.iodepth_batch_complete_min != defaults.iodepth_batch_complete_min) {
    add("iodepth_batch_complete_min", std::to_string(spec.iodepth_batch_complete_min));
  }
  if (spec.iodepth_batch_complete_max != defaults.iodepth_batch_complete_max) {
    add("iodepth_batch_complete_max", std::to_string(spec.iodepth_batch_complete_max));
  }
  if (spec.size != defaults.size) add("size", FormatSize(spec.size));
  if (spec.offset != defaults.offset) add("offset", FormatSize(spec.offset));
  if (spec.io_size != defaults.io_size) add("io_size", FormatSize(spec.io_size));
  if (spec.number_ios != defaults.number_ios) add("number_ios", std::to_string(spec.number_ios));
  if (spec.runtime != defaults.runtime) add("runtime", FormatTime(spec.runtime));
  if (spec.time_based) add("time_based", "");
  if (spec.ramp_time != defaults.ramp_time) add("ramp_time", FormatTime(spec.ramp_time));
  if (spec.rwmixread != defaults.rwmixread) add("rwmixread", std::to_string(spec.rwmixread));
  if (spec.rate_iops_read != 0 || spec.rate_iops_write != 0) {
    add("rate_iops", fmt::format("{},{}", spec.rate_iops_read, spec.rate_iops_write));
  }
  if (spec.randrepeat != defaults.randrepeat) add("randrepeat", spec.randrepeat ? "1" : "0");
  if (spec.randseed) add("randseed", std::to_string(*spec.randseed));
  if (spec.fsync != defaults.fsync) add("fsync", std::to_string(spec.fsync));
  return out;
}

std::string JobFingerprint(const JobSpec& spec) {
  std::string out;
  for (const JobOption& option : ToJobOptions(spec)) {
    if (option.name == "name") continue;
    if (!out.empty()) out += ';';
    out += option.name;
    out += '=';
    // Escaped so that no value can forge a separator.
    for (char c : option.value.empty() ? std::string("1") : option.value) {
      if (c == ';' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace iowatch::probes
