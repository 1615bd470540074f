// The probes section: its schema and lists (walked by the Reader of
// yaml_reader.h), the bundled job set, and the merge of probes.defaults with
// each job, which both the built-in defaults and a parsed file go through.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <expected>
#include <filesystem>
#include <utility>

#include "common/clock.h"
#include "common/units.h"
#include "config/yaml_reader.h"
#include "probes/spec/job_file.h"

namespace iowatch::config {
namespace {

using internal::BoolKey;
using internal::DurationKey;
using internal::IntegerKey;
using internal::NumberKey;
using internal::ProbeJobDraft;
using internal::ProbesDraft;
using std::chrono::milliseconds;

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

// An error of one job, with the dotted key it concerns.
struct LocatedError {
  std::string path;
  Error error;
};

bool IsTargetOption(std::string_view name) { return name == "filename" || name == "directory"; }

std::vector<std::pair<std::string, std::vector<probes::JobOption>>> BundledProbeJobOptions() {
  return {
      {"randread-4k-qd1", {{"rw", "randread"}, {"bs", "4k"}, {"iodepth", "1"}}},
      {"randwrite-4k-qd1", {{"rw", "randwrite"}, {"bs", "4k"}, {"iodepth", "1"}}},
      {"seqread-1m-qd8", {{"rw", "read"}, {"bs", "1m"}, {"iodepth", "8"}}},
  };
}

// `job` with its spec: the defaults' options, then the job's, then
// ValidateJobSpec and the timing rules. A job that gives filename or
// directory replaces both of the defaults' (so it can move to another
// directory or a device without unsetting the default). Messages begin with
// the key at fault: "jitter: ", "timeout: " or a fio option ("size: ").
Result<ProbeJobConfig> BuildJob(ProbeJobConfig job, std::span<const probes::JobOption> defaults,
                                std::span<const probes::JobOption> options) {
  probes::JobSpec spec;
  if (auto ok = probes::ApplyJobOption(spec, "name", job.name); !ok) {
    return ErrorOf(ok);
  }
  const bool job_sets_target = std::ranges::any_of(
      options, [](const probes::JobOption& o) { return IsTargetOption(o.name); });
  for (const probes::JobOption& option : defaults) {
    if (job_sets_target && IsTargetOption(option.name)) continue;
    if (auto ok = probes::ApplyJobOption(spec, option.name, option.value); !ok) {
      return ErrorOf(ok);
    }
  }
  for (const probes::JobOption& option : options) {
    if (auto ok = probes::ApplyJobOption(spec, option.name, option.value); !ok) {
      return ErrorOf(ok);
    }
  }
  if (auto ok = probes::ValidateJobSpec(spec); !ok) return ErrorOf(ok);

  // A jitter above half the period could put a run before the previous one's
  // slot; a timeout within the runtime would end every run as an error.
  if (job.jitter * 2 > job.every) {
    return Invalid(fmt::format("jitter: expected at most half of every ({}), found {}",
                               FormatDuration(job.every), FormatDuration(job.jitter)));
  }
  const auto busy = std::chrono::ceil<milliseconds>(spec.runtime + spec.ramp_time);
  if (job.timeout <= busy) {
    return Invalid(fmt::format("timeout: expected more than runtime + ramp_time ({}), found {}",
                               FormatDuration(busy), FormatDuration(job.timeout)));
  }
  job.spec = std::move(spec);
  return job;
}

// A job's options: those of its job_file's job (its [global] ones, then its
// own), then its `options`. An error points at job_file, with the file's own
// file:line.
std::expected<std::vector<probes::JobOption>, LocatedError> JobFileOptions(
    const ProbeJobDraft& job) {
  if (job.job_file.empty()) return job.options;
  auto located = [&](const Error& error) {
    return std::unexpected(LocatedError{
        job.path + ".job_file", MakeError(ErrorCode::kInvalidArgument, error.ToString()).error()});
  };
  // Checked whole once the defaults are under it (BuildJob).
  auto set = probes::ReadJobFile(job.job_file, probes::JobCheck::kOptionsOnly);
  if (!set) return located(set.error());
  auto options = probes::OptionsOfJob(*set, job.job_section);
  if (!options) {
    Error error = options.error();
    error.path = job.job_file;
    return located(error);
  }
  options->insert(options->end(), job.options.begin(), job.options.end());
  return std::move(*options);
}

// Where a timing error points: the job's own key, else the default's (unless
// the job's own `every` is what the default jitter no longer fits), else
// nowhere more precise than the job.
std::optional<std::string> TimingKey(const ProbesDraft& draft, const ProbeJobDraft& job,
                                     std::string_view key) {
  const bool jitter = key == "jitter";
  if (jitter ? job.jitter_set : job.timeout_set) return fmt::format("{}.{}", job.path, key);
  if (jitter ? draft.jitter_set && !job.every_set : draft.timeout_set) {
    return fmt::format("probes.defaults.{}", key);
  }
  return std::nullopt;
}

// Every job over the defaults, in order. An invalid option combination points
// at the job, or at probes.defaults.options for a bundled job (which only the
// defaults can break); a duplicate at the second job's name.
std::expected<std::vector<ProbeJobConfig>, LocatedError> BuildJobs(const ProbesDraft& draft) {
  std::vector<ProbeJobDraft> jobs;
  if (draft.jobs) {
    jobs = *draft.jobs;
  } else {
    for (auto& [name, options] : BundledProbeJobOptions()) {
      ProbeJobDraft& job = jobs.emplace_back();
      job.path = "probes.defaults.options";
      job.job.name = name;
      job.options = std::move(options);
    }
  }
  std::vector<ProbeJobConfig> built;
  for (size_t i = 0; i < jobs.size(); ++i) {
    ProbeJobDraft& job = jobs[i];
    for (size_t k = 0; k < i; ++k) {
      if (jobs[k].job.name != job.job.name) continue;
      return std::unexpected(LocatedError{
          job.path + ".name",
          MakeError(ErrorCode::kInvalidArgument,
                    fmt::format("duplicate job name {:?} (also {})", job.job.name, jobs[k].path))
              .error()});
    }
    if (!job.every_set) job.job.every = draft.defaults.every;
    if (!job.jitter_set) job.job.jitter = draft.defaults.jitter;
    if (!job.timeout_set) job.job.timeout = draft.defaults.timeout;
    auto from_file = JobFileOptions(job);
    if (!from_file) return std::unexpected(std::move(from_file.error()));
    auto one = BuildJob(job.job, draft.default_options, *from_file);
    if (one) {
      built.push_back(std::move(*one));
      continue;
    }
    LocatedError error{job.path, std::move(one.error())};
    for (std::string_view key : {"jitter", "timeout"}) {
      if (!error.error.message.starts_with(fmt::format("{}: ", key))) continue;
      if (auto at = TimingKey(draft, job, key)) {
        error.error.message.erase(0, key.size() + 2);
        error.path = std::move(*at);
      }
    }
    if (!draft.jobs) error.error.message += fmt::format(" (bundled job {})", job.job.name);
    return std::unexpected(std::move(error));
  }
  return built;
}

// One option on its own, as ApplyJobOption sees it, its message no longer
// starting with the option's name (the key path has it). kParse for an
// unknown option (the fault is the key), else the value's error.
Status CheckJobOption(std::string_view name, std::string_view value) {
  if (name == "name") return Invalid("not allowed: a probe's name is its job's name");
  probes::JobSpec scratch;
  auto ok = probes::ApplyJobOption(scratch, name, value);
  if (ok) return ok;
  std::string message = std::move(ok.error().message);
  const std::string unknown = fmt::format("unknown option {:?}", name);
  if (message.starts_with(unknown)) {
    return MakeError(ErrorCode::kParse, "unknown fio job option" + message.substr(unknown.size()));
  }
  if (message.starts_with(fmt::format("{}: ", name))) message.erase(0, name.size() + 2);
  return MakeError(ok.error().code, std::move(message));
}

// A job name also names its probe file and a metric label: short and plain,
// a safe file name everywhere that needs no quoting.
Result<std::string> ParseNonEmpty(std::string_view text) {
  if (text.empty()) return Invalid("expected a non-empty value");
  return std::string(text);
}

Result<std::string> ParseJobName(std::string_view text) {
  const auto plain = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  };
  if (!text.empty() && text.size() <= 64 && std::isalnum(static_cast<unsigned char>(text[0])) &&
      std::ranges::all_of(text, plain)) {
    return std::string(text);
  }
  return Invalid(fmt::format(
      "expected 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, "
      "found {:?}",
      text));
}

}  // namespace

std::vector<ProbeJobConfig> DefaultProbeJobs() {
  // Valid by construction: a unit test parses the bundled file to exactly
  // these jobs, so value() cannot throw.
  return BuildJobs(ProbesDraft{}).value();
}

probes::JobSpec ResolveProbeTarget(probes::JobSpec spec, const std::filesystem::path& state_dir) {
  for (std::string* path : {&spec.directory, &spec.filename}) {
    if (path->empty() || std::filesystem::path(*path).is_absolute()) continue;
    *path = (state_dir / *path).lexically_normal().string();
  }
  return spec;
}

namespace internal {

std::vector<probes::JobOption> DefaultProbeOptions() {
  return {{"directory", "probes"},
          {"size", "64M"},
          {"ioengine", std::string(probes::ToString(probes::EngineKind::kIoUring))},
          {"direct", "1"},
          {"runtime", "3s"},
          {"time_based", "1"}};
}

// Each option is checked alone as it is read, so an error points at it; the
// options of a job are checked together once every job is read.
void Reader::JobOptions(const Value& v, std::vector<probes::JobOption>& out) {
  if (failed() || v.node.IsNull()) return;
  if (!v.node.IsMap()) return Expected(v, "a map of fio job options");
  std::vector<probes::JobOption> options;
  for (const auto& entry : v.node) {
    std::string name;
    String(Value{entry.first, v.path, entry.first.Mark()}, name);
    const Value value{entry.second, Join(v.path, name), EntryMark(entry.first, entry.second)};
    if (failed()) return;
    if (std::ranges::any_of(options, [&](const auto& o) { return o.name == name; })) {
      return Fail(ErrorCode::kParse, entry.first.Mark(), value.path, "duplicate key");
    }
    if (!value.node.IsScalar()) {
      return Expected(value,
                      "an option value (a string or a number; 1 for a flag like time_based)");
    }
    if (auto ok = CheckJobOption(name, value.node.Scalar()); !ok) {
      const bool name_at_fault = ok.error().code == ErrorCode::kParse || name == "name";
      return Fail(ok.error().code, name_at_fault ? entry.first.Mark() : value.mark, value.path,
                  ok.error().message);
    }
    options.push_back({name, value.node.Scalar()});
  }
  out = std::move(options);
}

namespace {

void Timing(Reader& r, const Value& v, milliseconds min, milliseconds& out, bool& set) {
  r.Duration(v, min, out);
  set = true;
}

// The baseline policy and its contention policy, as the rows' paths begin:
// a number key's field and range are its row's, as fio's minval/maxval.
constexpr auto kProbes = &Config::probes;
constexpr auto kBaseline = &ProbesConfig::baseline;
constexpr auto kContention = &probes::BaselinePolicy::contention;

constexpr Key kContentionKeys[] = {
    NumberKey<0.0, 1.0, kProbes, kBaseline, kContention,
              &probes::ContentionPolicy::max_foreign_share>("max_foreign_share"),
    NumberKey<0.0, 1000.0, kProbes, kBaseline, kContention,
              &probes::ContentionPolicy::max_foreign_iops_ratio>("max_foreign_iops_ratio"),
    NumberKey<0.0, 1e9, kProbes, kBaseline, kContention,
              &probes::ContentionPolicy::min_foreign_load>("min_foreign_load"),
    NumberKey<0.0, 1.0, kProbes, kBaseline, kContention, &probes::ContentionPolicy::max_cpu_wait>(
        "max_cpu_wait"),
    NumberKey<0.0, 1.0, kProbes, kBaseline, kContention, &probes::ContentionPolicy::max_cpu_steal>(
        "max_cpu_steal"),
    NumberKey<0.0, 1.0, kProbes, kBaseline, kContention, &probes::ContentionPolicy::max_quantile>(
        "max_quantile"),
    {"before",
     [](Reader& r, const Value& v, Config& c) {
       milliseconds window{std::lround(c.probes.baseline.contention.before_seconds * 1000)};
       r.Duration(v, milliseconds(0), window, std::chrono::minutes(1));
       c.probes.baseline.contention.before_seconds = ToSeconds(window);
     }},
    BoolKey<kProbes, kBaseline, kContention, &probes::ContentionPolicy::bands>("bands"),
};
constexpr Key kBaselineKeys[] = {
    IntegerKey<1, 1000, kProbes, kBaseline, &probes::BaselinePolicy::runs>("runs"),
    NumberKey<0.0, 1.0, kProbes, kBaseline, &probes::BaselinePolicy::throughput_tolerance>(
        "throughput_tolerance"),
    NumberKey<0.0, 100.0, kProbes, kBaseline, &probes::BaselinePolicy::latency_tolerance>(
        "latency_tolerance"),
    NumberKey<0.0, 100.0, kProbes, kBaseline, &probes::BaselinePolicy::tail_tolerance>(
        "tail_tolerance"),
    NumberKey<0.0, 100.0, kProbes, kBaseline, &probes::BaselinePolicy::spread_factor>(
        "spread_factor"),
    IntegerKey<1, 1000, kProbes, kBaseline, &probes::BaselinePolicy::hysteresis>("hysteresis"),
    {"min_bad_span",
     [](Reader& r, const Value& v, Config& c) {
       milliseconds span{c.probes.baseline.min_bad_span_ms};
       r.Duration(v, milliseconds(0), span, std::chrono::weeks(1));
       c.probes.baseline.min_bad_span_ms = span.count();
     }},
    {"min_age",
     [](Reader& r, const Value& v, Config& c) {
       milliseconds age{c.probes.baseline.min_age_ms};
       r.Duration(v, milliseconds(0), age, std::chrono::weeks(52));
       c.probes.baseline.min_age_ms = age.count();
     }},
    NumberKey<0.0, 1.0, kProbes, kBaseline, &probes::BaselinePolicy::throughput_spread_floor>(
        "throughput_spread_floor"),
    NumberKey<0.0, 100.0, kProbes, kBaseline, &probes::BaselinePolicy::latency_spread_floor>(
        "latency_spread_floor"),
    NumberKey<0.0, 100.0, kProbes, kBaseline, &probes::BaselinePolicy::tail_spread_floor>(
        "tail_spread_floor"),
    IntegerKey<0, 1000000, kProbes, kBaseline, &probes::BaselinePolicy::quantile_samples>(
        "quantile_samples"),
    NumberKey<0.0, 0.9999, kProbes, kBaseline, &probes::BaselinePolicy::quantile_confidence>(
        "quantile_confidence"),
    {"metrics",
     [](Reader& r, const Value& v, Config& c) { r.MetricNames(v, c.probes.baseline.metrics); }},
    Section("contention", kContentionKeys),
};
constexpr Key kDefaultsKeys[] = {
    {"every",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(1000), r.probes().defaults.every, r.probes().every_set);
     }},
    {"jitter",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(0), r.probes().defaults.jitter, r.probes().jitter_set);
     }},
    {"timeout",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(1000), r.probes().defaults.timeout, r.probes().timeout_set);
     }},
    {"options",
     [](Reader& r, const Value& v, Config&) { r.JobOptions(v, r.probes().default_options); }},
};
constexpr Key kJobKeys[] = {
    {"name", [](Reader& r, const Value& v,
                Config&) { r.Read(v, "a job name", ParseJobName, r.job().job.name); }},
    {"every",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(1000), r.job().job.every, r.job().every_set);
     }},
    {"jitter",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(0), r.job().job.jitter, r.job().jitter_set);
     }},
    {"timeout",
     [](Reader& r, const Value& v, Config&) {
       Timing(r, v, milliseconds(1000), r.job().job.timeout, r.job().timeout_set);
     }},
    {"options", [](Reader& r, const Value& v, Config&) { r.JobOptions(v, r.job().options); }},
    {"job_file",
     [](Reader& r, const Value& v, Config&) {
       r.Read(v, "a path", ParsePath, r.job().job_file);
       if (!r.job().job_file.empty() && !r.job().job_file.starts_with('/')) {
         r.job().job_file =
             (std::filesystem::path(r.source()).parent_path() / r.job().job_file).string();
       }
     }},
    {"job_section", [](Reader& r, const Value& v,
                       Config&) { r.Read(v, "a job name", ParseNonEmpty, r.job().job_section); }},
    {"judge", [](Reader& r, const Value& v, Config&) { r.MetricNames(v, r.job().job.judge); }},
};

}  // namespace

// constinit: constant-initialized, nothing runs (or throws) at start-up.
// NOLINTNEXTLINE(cert-err58-cpp)
constinit const Key kProbesKeys[kProbesKeyCount] = {
    BoolKey<kProbes, &ProbesConfig::enabled>("enabled"),
    IntegerKey<1, 64, kProbes, &ProbesConfig::max_concurrent>("max_concurrent"),
    {"busy_threshold",
     [](Reader& r, const Value& v, Config& c) {
       r.Read(
           v, "a number", [](std::string_view s) { return ParseNumber(s, 0, 1, false); },
           c.probes.busy_threshold);
     }},
    DurationKey<1000, kProbes, &ProbesConfig::busy_window>("busy_window"),
    DurationKey<1000, kProbes, &ProbesConfig::busy_retry>("busy_retry"),
    IntegerKey<1, 10000, kProbes, &ProbesConfig::max_skips>("max_skips"),
    {"retention",
     [](Reader& r, const Value& v, Config& c) {
       // Retention is compared with wall-clock milliseconds only: ten years is safe.
       r.Duration(v, milliseconds(3600 * 1000), c.probes.retention, std::chrono::weeks(520));
     }},
    Section("baseline", kBaselineKeys),
    Section("defaults", kDefaultsKeys),
    {"jobs", [](Reader& r, const Value& v, Config& c) { r.Jobs(v, c); }},
};

// A list of BaselineMetrics() names, none twice.
void Reader::MetricNames(const Value& v, std::vector<std::string>& out) {
  if (failed()) return;
  std::string known;
  for (const probes::MetricSpec& spec : probes::BaselineMetrics()) {
    known += fmt::format("{}{}", known.empty() ? "" : ", ", spec.name);
  }
  if (!v.node.IsSequence()) return Expected(v, fmt::format("a list of metrics ({})", known));
  std::vector<std::string> names;
  for (size_t i = 0; i < v.node.size(); ++i) {
    const Value item{v.node[i], fmt::format("{}[{}]", v.path, i), v.node[i].Mark()};
    std::string name;
    String(item, name);
    if (failed()) return;
    if (probes::FindMetric(name) == nullptr) return Expected(item, fmt::format("one of {}", known));
    if (std::ranges::find(names, name) != names.end()) {
      return Fail(ErrorCode::kInvalidArgument, item.mark, item.path,
                  fmt::format("{} is listed twice", name));
    }
    names.push_back(std::move(name));
  }
  out = std::move(names);
}

// Each job is a small map walked with the schema.
void Reader::Jobs(const Value& v, Config& config) {
  if (failed()) return;
  if (!v.node.IsSequence()) return Expected(v, "a list of jobs ([] for none)");
  std::vector<ProbeJobDraft> jobs(v.node.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Value job{v.node[i], fmt::format("{}[{}]", v.path, i), v.node[i].Mark()};
    jobs[i].path = job.path;
    marks_[job.path] = job.mark;
    if (!job.node.IsMap()) {
      return Expected(job,
                      fmt::format("a map with keys {}", KeyNames(kJobKeys, std::size(kJobKeys))));
    }
    job_ = &jobs[i];
    Walk(job, kJobKeys, std::size(kJobKeys), config);
    job_ = nullptr;
    if (failed()) return;
    if (jobs[i].job.name.empty())
      return Fail(ErrorCode::kParse, job.mark, job.path, "expected a name");
  }
  probes_.jobs = std::move(jobs);
}

// An error points at its key, or at the nearest enclosing key the file sets
// (a file that sets only probes.defaults.every and breaks a bundled job
// points at probes.defaults).
void BuildProbeJobs(Reader& r, Config& config) {
  auto jobs = BuildJobs(r.probes());
  if (jobs) {
    config.probes.jobs = std::move(*jobs);
    return;
  }
  std::string at = jobs.error().path;
  while (r.MarkOf(at).is_null() && at.find('.') != std::string::npos) at.resize(at.rfind('.'));
  r.Fail(jobs.error().error.code, r.MarkOf(at), jobs.error().path, jobs.error().error.message);
}

}  // namespace internal
}  // namespace iowatch::config
