// Shared by the store tests: a scratch directory under /var/tmp (removed
// afterwards) and realistic runs (latencies drawn like a disk's, histograms
// with thousands of samples, both directions, CPU, an I/O error).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>

#include "probes/store/store.h"
#include "probes/store/store_sqlite.h"

namespace iowatch::probes::test_store {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/var/tmp/iowatch-store-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& Path() const { return path_; }
  std::filesystem::path Db() const { return path_ / "iowatch.db"; }

 private:
  std::filesystem::path path_;
};

// Runs SQL on the store's file through a connection of its own, as another
// program (or an older iowatch) would.
inline int64_t QueryInt(const std::filesystem::path& db, const std::string& sql) {
  Result<internal::Connection> raw = internal::Connection::Open(db.string());
  EXPECT_TRUE(raw) << raw.error().ToString();
  Result<int64_t> value = raw->QueryInt(sql, "test");
  EXPECT_TRUE(value) << value.error().ToString();
  return value.value_or(-1);
}

// The tables of schema 10 (the passive judge's), dropped to take a store
// back to an older version.
inline constexpr std::string_view kDropPassiveTables =
    "DROP TABLE passive_states; DROP TABLE passive_windows; "
    "DROP TABLE passive_states_quarantine; DROP TABLE passive_resets; ";

inline void Exec(const std::filesystem::path& db, const std::string& sql) {
  Result<internal::Connection> raw = internal::Connection::Open(db.string());
  ASSERT_TRUE(raw) << raw.error().ToString();
  Status done = raw->Exec(sql, "test");
  EXPECT_TRUE(done) << done.error().ToString();
}

inline JobSpec SampleSpec() {
  JobSpec spec;
  spec.name = "randrw-4k";
  spec.filename = "/var/tmp/odd;name:with\\escapes";  // every character the text escapes
  spec.rw = RwMode::kRandReadWrite;
  spec.engine = EngineKind::kIoUring;
  spec.iodepth = 4;
  spec.direct = true;
  spec.size = 64 << 20;
  spec.runtime = std::chrono::seconds(5);
  spec.time_based = true;
  spec.rwmixread = 70;
  return spec;
}

inline void Fill(DirectionStats& d, std::mt19937_64& rng, size_t n, double median_ns) {
  std::lognormal_distribution<double> clat(std::log(median_ns), 0.8);
  std::uniform_int_distribution<uint64_t> slat(800, 5000);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<uint64_t>(clat(rng));
    const uint64_t s = slat(rng);
    d.slat.Add(s);
    d.clat.Add(c);
    d.lat.Add(c + s);
    d.clat_histogram.Record(c);
    d.lat_histogram.Record(c + s);
  }
  d.ios = n;
  d.bytes = n * 4096;
  d.short_ios = n / 1000;
  d.errors = 1;
  d.runtime = std::chrono::milliseconds(5000) + std::chrono::nanoseconds(n);
}

// A complete run; `seed` varies every figure.
inline RunRecord SampleRun(uint64_t seed, std::string job = "randrw-4k", int64_t start_ms = 0) {
  std::mt19937_64 rng(seed);
  RunRecord run;
  run.job = std::move(job);
  run.device = "259:0";
  run.model = "Samsung SSD 980 PRO 1TB";
  run.kernel = "6.1.0-18-amd64";
  run.start_unix_ms = start_ms != 0 ? start_ms : 1717243200000 + static_cast<int64_t>(seed);
  run.duration_ms = 5012;
  ProbeResult& r = run.result;
  r.spec = SampleSpec();
  Fill(r.read, rng, 20000 + seed % 1000, 180e3);
  Fill(r.write, rng, 8000 + seed % 500, 40e3);
  r.fsyncs = 17;
  r.cpu = CpuUsage{0.25 + static_cast<double>(seed) / 1000, 0.75, 1234, 56};
  r.elapsed = std::chrono::nanoseconds(5'000'123'456);
  r.end = RunEnd::kFailed;
  r.error = Error::Io("pwrite: Input/output error", "/var/tmp/probe", 5);
  run.ok = false;
  run.error = "an I/O error stopped the run";
  // Every metric, as the daemon stores them: a run that lacks some has them
  // computed on reading (runs stored before they existed).
  run.metrics = ExtractMetrics(r);
  return run;
}

// An ok run of a given series at a given time, small but complete.
inline RunRecord SeriesRun(std::string job, std::string device, int64_t start_ms, bool ok = true) {
  RunRecord run = SampleRun(static_cast<uint64_t>(start_ms), std::move(job), start_ms);
  run.device = std::move(device);
  run.ok = ok;
  run.error = ok ? "" : "failed";
  run.result.error.reset();
  run.result.end = ok ? RunEnd::kCompleted : RunEnd::kFailed;
  return run;
}

inline void ExpectSameStats(const RunningStats& got, const RunningStats& want) {
  EXPECT_EQ(got.Count(), want.Count());
  EXPECT_EQ(got.Min(), want.Min());
  EXPECT_EQ(got.Max(), want.Max());
  EXPECT_EQ(got.Mean(), want.Mean());
  EXPECT_DOUBLE_EQ(got.StdDev(), want.StdDev());
}

inline void ExpectSameHistogram(const LatencyHistogram& got, const LatencyHistogram& want) {
  EXPECT_EQ(got.Count(), want.Count());
  EXPECT_TRUE(std::ranges::equal(got.Buckets(), want.Buckets()));
  for (double p : DefaultPercentiles()) EXPECT_EQ(got.Percentile(p), want.Percentile(p)) << p;
}

inline void ExpectSameDirection(const DirectionStats& got, const DirectionStats& want) {
  EXPECT_EQ(got.ios, want.ios);
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.short_ios, want.short_ios);
  EXPECT_EQ(got.errors, want.errors);
  EXPECT_EQ(got.runtime, want.runtime);
  ExpectSameStats(got.slat, want.slat);
  ExpectSameStats(got.clat, want.clat);
  ExpectSameStats(got.lat, want.lat);
  ExpectSameHistogram(got.clat_histogram, want.clat_histogram);
  ExpectSameHistogram(got.lat_histogram, want.lat_histogram);
  EXPECT_EQ(got.Iops(), want.Iops());
  EXPECT_EQ(got.BandwidthBytesPerSecond(), want.BandwidthBytesPerSecond());
}

}  // namespace iowatch::probes::test_store
