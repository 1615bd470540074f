// The run classifier on synthetic conditions: clean below both foreign-load
// limits, contended above either (or when another probe measured, or the
// probe's thread waited for a CPU), unknown without conditions; load bands a
// factor of two wide from exact counts and bytes.
#include "probes/verdicts/run_class.h"

#include <gtest/gtest.h>

#include <cmath>

namespace iowatch::probes {
namespace {

// A 2 s run of 20,000 4 KiB probe requests, and `foreign` requests of
// `foreign_bytes_each` from others.
RunConditions Conditions(uint64_t foreign, uint64_t foreign_bytes_each = 4096) {
  RunConditions c;
  c.seconds = 2;
  c.own_requests = 20000;
  c.own_bytes = 20000 * 4096;
  c.device_ios = c.own_requests + foreign;
  c.device_bytes = c.own_bytes + foreign * foreign_bytes_each;
  return c;
}

TEST(ClassifyTest, UnknownWithoutConditions) {
  const Classification c = Classify(std::nullopt, {});
  EXPECT_EQ(c.run_class, RunClass::kUnknown);
  EXPECT_EQ(c.load, "");
  EXPECT_EQ(ToString(c.run_class), "unknown");
}

TEST(ClassifyTest, CleanUpToTenPercentOfTheProbesRequests) {
  // 2,000 foreign 4 KiB requests beside 20,000: exactly 10 % of the probe's
  // rate and 9.1 % of the work: clean.
  const Classification clean = Classify(Conditions(2000), {});
  EXPECT_EQ(clean.run_class, RunClass::kClean);
  EXPECT_NE(clean.load.find("others did 1000 IOPS"), std::string::npos) << clean.load;
  // One more request is above 10 % of the probe's rate.
  const Classification contended = Classify(Conditions(2001), {});
  EXPECT_EQ(contended.run_class, RunClass::kContended);
  // The band is the load's alone, whatever the class: 1,000 × (1 + 4096 /
  // 65536) = 1,062 weighted requests/s, band 6 [1024, 2048), for both; a
  // probe slowed down would make the same load contended, in the same band.
  EXPECT_EQ(clean.band, 6);
  EXPECT_EQ(contended.band, 6);
  // Under min_foreign_load: the quiet band.
  EXPECT_EQ(Classify(Conditions(90), {}).band, kCleanBand);  // 47.8 /s
}

TEST(ClassifyTest, FewLargeForeignRequestsAreContendedByTheirShareOfTheWork) {
  // 100 requests of 4 MiB: 0.5 % of the probe's requests, but 64 units of
  // work each (1 + 4 MiB / 64 KiB): 6,500 against 21,250 = 23 % of the work.
  const Classification c = Classify(Conditions(100, 4 << 20), {});
  EXPECT_EQ(c.run_class, RunClass::kContended);
  ContentionPolicy lax;
  lax.max_foreign_share = 0.3;
  EXPECT_EQ(Classify(Conditions(100, 4 << 20), lax).run_class, RunClass::kClean);
}

TEST(ClassifyTest, AnotherProbeOrAWaitForTheCpuMakesARunContended) {
  RunConditions c = Conditions(0);
  c.other_probe = true;
  EXPECT_EQ(Classify(c, {}).run_class, RunClass::kContended);
  EXPECT_NE(Classify(c, {}).load.find("another probe"), std::string::npos);

  RunConditions cpu = Conditions(0);
  cpu.cpu_wait = 0.26;
  const Classification waited = Classify(cpu, {});
  EXPECT_EQ(waited.run_class, RunClass::kContended);
  EXPECT_EQ(waited.band, kNoBand);
  EXPECT_NE(waited.load.find("waited for a CPU 26 %"), std::string::npos) << waited.load;
  cpu.cpu_wait = 0.25;
  EXPECT_EQ(Classify(cpu, {}).run_class, RunClass::kClean);

  // The hypervisor taking more than 5 % of the CPUs: the same, with its words.
  RunConditions stolen = Conditions(0);
  stolen.cpu_steal = 0.11;
  const Classification host = Classify(stolen, {});
  EXPECT_EQ(host.run_class, RunClass::kContended);
  EXPECT_EQ(host.band, kNoBand);
  EXPECT_NE(host.load.find("the hypervisor took 11 % of the CPUs (steal)"), std::string::npos)
      << host.load;
  stolen.cpu_steal = 0.05;
  EXPECT_EQ(Classify(stolen, {}).run_class, RunClass::kClean);
}

TEST(ClassifyTest, TheLoadBeforeTheRunCountsWhenItWasLarger) {
  // A probe that saturates the disk crowds a rate-limited load out: during
  // the run others did 100 requests (50 IOPS, clean), in the second before
  // 2,000 of 16 KiB: 2,000 × 1.25 = 2,500 weighted/s, band 7.
  RunConditions c = Conditions(100);
  EXPECT_EQ(Classify(c, {}).run_class, RunClass::kClean);
  c.before = LoadWindow{1, 2000, 2000 * 16384, 0.4};
  const Classification crowded = Classify(c, {});
  EXPECT_EQ(crowded.run_class, RunClass::kContended);
  EXPECT_EQ(crowded.band, 7);
  EXPECT_DOUBLE_EQ(ForeignLoad(c), 2500);
  EXPECT_NE(crowded.load.find("others did 50 IOPS"), std::string::npos) << crowded.load;
  EXPECT_NE(crowded.load.find(", 2000 IOPS (32.8 MB/s) in the 1 s before"), std::string::npos)
      << crowded.load;
  // A lighter load before than during changes nothing: the band is the run's.
  RunConditions busy = Conditions(16000);
  const Classification during = Classify(busy, {});
  busy.before = LoadWindow{1, 10, 40960, 0.01};
  EXPECT_EQ(Classify(busy, {}), during);
  // A quiet second before a quiet run: clean, whatever the ratios (under
  // min_foreign_load).
  RunConditions quiet = Conditions(0);
  quiet.before = LoadWindow{1, 40, 40 * 4096, 0.01};
  EXPECT_EQ(Classify(quiet, {}).run_class, RunClass::kClean);
}

TEST(LoadBandTest, BandsAreAFactorOfTwoWide) {
  EXPECT_EQ(LoadBand(0), kFirstLoadBand);
  EXPECT_EQ(LoadBand(63.9), 1);
  EXPECT_EQ(LoadBand(64), 2);
  EXPECT_EQ(LoadBand(127), 2);
  EXPECT_EQ(LoadBand(128), 3);
  EXPECT_EQ(LoadBand(2048), 7);
  EXPECT_EQ(LoadBand(std::nan("")), 1);
  EXPECT_EQ(LoadBand(1e300), 61);  // capped, never overflowing
  for (int band = 2; band < 20; ++band) {
    EXPECT_DOUBLE_EQ(LoadBandHigh(band), 2 * LoadBandLow(band)) << band;
    EXPECT_EQ(LoadBand(LoadBandLow(band)), band) << band;
    EXPECT_EQ(LoadBand(std::nextafter(LoadBandLow(band), 0)), band - 1) << band;
  }
  EXPECT_DOUBLE_EQ(LoadBandLow(1), 0);
}

TEST(LoadBandTest, AContendedRunsBandComesFromOthersCountsAndBytes) {
  // 6,000 foreign 16 KiB requests in 2 s: 3,000/s × 1.25 = 3,750 → band 7
  // [2048, 4096).
  const Classification c = Classify(Conditions(6000, 16384), {});
  EXPECT_EQ(c.run_class, RunClass::kContended);
  EXPECT_DOUBLE_EQ(ForeignLoad(*std::optional(Conditions(6000, 16384))), 3750);
  EXPECT_EQ(c.band, 7);
}

TEST(LoadBandTest, AProbeThatSlowsDownKeepsItsBand) {
  // The same foreign load beside a probe at a third of its speed: the band
  // depends on the others' I/O only, so a slower disk is judged against the
  // same band's baseline and shows as slower.
  RunConditions slow = Conditions(6000, 16384);
  slow.device_ios -= 2 * slow.own_requests / 3;
  slow.device_bytes -= 2 * slow.own_bytes / 3;
  slow.own_requests /= 3;
  slow.own_bytes /= 3;
  EXPECT_EQ(Classify(slow, {}).band, Classify(Conditions(6000, 16384), {}).band);
}

TEST(ClassifyTest, ALittleForeignIoBesideASlowProbeIsClean) {
  // A probe cut to 40 IOPS (a slow disk) beside the journal's 6 writes a
  // second: 15 % of the probe's rate, but below min_foreign_load (50/s), so
  // the run is clean and the slowdown is judged.
  RunConditions slow;
  slow.seconds = 2;
  slow.own_requests = 80;
  slow.own_bytes = 80 * 4096;
  slow.device_ios = 80 + 12;
  slow.device_bytes = slow.own_bytes + 12 * 4096;
  EXPECT_EQ(Classify(slow, {}).run_class, RunClass::kClean);
  ContentionPolicy strict;
  strict.min_foreign_load = 0;
  EXPECT_EQ(Classify(slow, strict).run_class, RunClass::kContended);
}

TEST(ClassifyTest, SplitRequestsWithoutForeignBytesAreNotForeign) {
  // The disk counted twice the probe's requests (large I/Os split), but every
  // byte was the probe's: clean.
  RunConditions c = Conditions(0);
  c.device_ios = 2 * c.own_requests;
  EXPECT_EQ(c.ForeignIos(), 0u);
  EXPECT_EQ(Classify(c, {}).run_class, RunClass::kClean);
}

}  // namespace
}  // namespace iowatch::probes
