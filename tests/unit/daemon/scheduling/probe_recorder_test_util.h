// Shared by the ProbeRecorder tests: synthetic jobs and outcomes (clean or
// beside others' load) and the options of a recorder on a temporary state
// directory with a fixed clock.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "daemon/scheduling/probe_recorder.h"

namespace iowatch::daemon::test_recorder {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

inline ScheduledJob Job(const std::string& name) {
  ScheduledJob job;
  job.name = name;
  job.spec.name = name;
  return job;
}

// A run of `ios` reads of `clat_us` each, over one second.
inline RunOutcome Outcome(const ScheduledJob& job, RunResult result, double clat_us,
                          int64_t start_ms, uint64_t ios = 200) {
  probes::ProbeResult r;
  r.spec = job.spec;
  const auto ns = static_cast<uint64_t>(clat_us * 1000);
  r.read.ios = ios;
  r.read.bytes = ios * 4096;
  r.read.runtime = std::chrono::seconds(1);
  for (uint64_t i = 0; i < ios; ++i) {
    r.read.clat.Add(ns);
    r.read.lat.Add(ns + 1000);
    r.read.clat_histogram.Record(ns);
    r.read.lat_histogram.Record(ns + 1000);
  }
  r.elapsed = std::chrono::seconds(1);
  r.cpu.user_seconds = 0.01;
  r.cpu.system_seconds = 0.02;
  RunOutcome outcome;
  outcome.result = result;
  outcome.probe = std::move(r);
  outcome.target_device = MakeDeviceId(8, 0);
  outcome.target_path = "/tmp/x";
  outcome.start_unix_ms = start_ms;
  // The disk did the probe's requests and nothing else: a clean run.
  probes::RunConditions c;
  c.seconds = 1;
  c.device_ios = c.own_requests = ios;
  c.device_bytes = c.own_bytes = ios * 4096;
  outcome.conditions = c;
  return outcome;
}

// The same run beside `foreign_iops` 4 KiB requests per second of others.
inline RunOutcome Contended(const ScheduledJob& job, double clat_us, int64_t start_ms,
                            uint64_t foreign_iops) {
  RunOutcome outcome = Outcome(job, RunResult::kContended, clat_us, start_ms);
  outcome.conditions->device_ios += foreign_iops;
  outcome.conditions->device_bytes += foreign_iops * 4096;
  return outcome;
}

inline ProbeRecorderOptions Options(const fs::path& dir, uint32_t runs = 3,
                                    uint32_t hysteresis = 2) {
  ProbeRecorderOptions o;
  o.state_dir = dir;
  o.baseline.runs = runs;
  o.baseline.hysteresis = hysteresis;
  o.baseline.min_age_ms = 0;
  o.baseline.min_bad_span_ms = 0;  // the fake runs are milliseconds apart
  o.sysfs = dir / "no-sysfs";
  o.wall_ms = [] { return int64_t{1'700'000'000'000}; };
  // The runs below start in 1970: a retention longer than that keeps them from pruning.
  o.retention = milliseconds(int64_t{1'800'000'000'000});
  return o;
}

inline const ProbeVerdict* FindVerdict(const ProbeJobSnapshot& job, std::string_view metric) {
  for (const ProbeVerdict& v : job.verdicts) {
    if (v.verdict.op == "read" && v.verdict.metric == metric) return &v;
  }
  return nullptr;
}

// Logs to a string while it lives.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // The lines that say what judging found (baselines learned, regressions
  // raised or cleared), from "probe " on: without the time.
  std::vector<std::string> Findings() const {
    std::vector<std::string> out;
    std::istringstream lines(text_.str());
    for (std::string line; std::getline(lines, line);) {
      const size_t from = line.find("probe ");
      const bool finding = line.find(" learned from ") != std::string::npos ||
                           line.find(" regressed: ") != std::string::npos ||
                           line.find(" recovered") != std::string::npos;
      if (finding && from != std::string::npos) out.push_back(line.substr(from));
    }
    return out;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace iowatch::daemon::test_recorder
