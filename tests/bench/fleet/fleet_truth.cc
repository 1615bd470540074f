#include "tests/bench/fleet/fleet_truth.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace iowatch::fleet {
namespace {

int64_t Seconds(int64_t ms) { return ms / 1000; }

std::string Raise(int64_t ms) { return ms < 0 ? "null" : std::to_string(Seconds(ms)); }

std::string FaultJson(const Fleet& fleet, const DiskSpec& d, const DiskCounts& c) {
  const ModelSpec& m = fleet.models[static_cast<size_t>(d.model)];
  return fmt::format(
      R"({{"instance":"{}","probe":"{}","device":"{}","model":"{}","firmware_rev":"{}",)"
      R"("kind":"{}","start":{},"loss_per_day":{:.4f},"iops_factor":{:.4f},)"
      R"("judge_first_raise":{},"passive_first_raise":{}}})",
      InstanceOf(d.host), ProbeOf(d.slot), DeviceOf(d.slot), m.name,
      m.firmwares[static_cast<size_t>(d.firmware)], ToString(d.fault.kind),
      Seconds(d.fault.start_ms), d.fault.loss_per_day, d.fault.iops_factor, Raise(c.first_raise_ms),
      Raise(c.passive.first_raise_ms));
}

// The firmware model's rollout: hosts' update times, the moment half of them
// were done (when the model's median moves), its disks, and what the judge
// raised on them.
std::string ModelFaultJson(const Fleet& fleet, const FleetResult& result) {
  std::vector<int64_t> updates;
  std::string hosts;
  size_t disks = 0, raised = 0, passive_raised = 0;
  for (size_t i = 0; i < fleet.disks.size(); ++i) {
    const DiskSpec& d = fleet.disks[i];
    if (d.fault.kind != FaultKind::kFirmware) continue;
    ++disks;
    raised += result.disks[i].first_raise_ms >= 0;
    passive_raised += result.disks[i].passive.first_raise_ms >= 0;
    if (d.slot != 0) continue;
    updates.push_back(d.fault.start_ms);
    hosts += fmt::format(R"({}{{"instance":"{}","update":{}}})", hosts.empty() ? "" : ",",
                         InstanceOf(d.host), Seconds(d.fault.start_ms));
  }
  std::ranges::sort(updates);
  const ModelSpec& m = fleet.models[static_cast<size_t>(fleet.firmware_model)];
  if (updates.empty()) return "null";
  return fmt::format(
      R"({{"model":"{}","from":"{}","to":"{}","iops_factor":{:.2f},"rollout_start":{},)"
      R"("first_update":{},"half_updated":{},"last_update":{},"reboot_seconds":{},"hosts":{},)"
      R"("disks":{},"judge_raised_disks":{},"passive_raised_disks":{},"host_updates":[{}]}})",
      m.name, m.firmwares[0], fleet.new_firmware, 1 - fleet.spec.firmware_loss,
      Seconds(fleet.rollout_start_ms), Seconds(updates.front()),
      Seconds(updates[updates.size() / 2]), Seconds(updates.back()), Seconds(fleet.spec.reboot_ms),
      updates.size(), disks, raised, passive_raised, hosts);
}

std::string ModelsJson(const Fleet& fleet) {
  std::string out;
  for (size_t i = 0; i < fleet.models.size(); ++i) {
    const ModelSpec& m = fleet.models[i];
    const auto disks = std::ranges::count_if(
        fleet.disks, [i](const DiskSpec& d) { return d.model == static_cast<int>(i); });
    std::string firmwares;
    for (const std::string& f : m.firmwares)
      firmwares += fmt::format("{}\"{}\"", firmwares.empty() ? "" : ",", f);
    out += fmt::format(R"({}{{"model":"{}","latency_us":{},"firmwares":[{}],"disks":{}}})",
                       out.empty() ? "" : ",", m.name, m.latency_us, firmwares, disks);
  }
  return out;
}

struct Totals {
  size_t runs = 0, judged = 0, contended = 0, healthy_raises = 0;
  PassiveCounts passive;      // first_raise_ms unused
  size_t passive_raised = 0;  // healthy disks (or before their fault) the passive judge raised
};

Totals Sum(const FleetResult& result) {
  Totals t;
  for (size_t i = 0; i < result.disks.size(); ++i) {
    const DiskCounts& c = result.disks[i];
    t.runs += c.runs;
    t.judged += c.judged;
    t.contended += c.contended;
    t.healthy_raises += c.healthy_raises;
    t.passive.windows += c.passive.windows;
    t.passive.judged += c.passive.judged;
    t.passive.healthy_raises += c.passive.healthy_raises;
    t.passive_raised += c.passive.healthy_raises > 0;
  }
  return t;
}

// The passive judge's raises on healthy disks (or before their fault), per
// disk: the false alarms, for a person to look into.
std::string PassiveHealthyJson(const Fleet& fleet, const FleetResult& result) {
  std::string out;
  for (size_t i = 0; i < fleet.disks.size(); ++i) {
    const DiskSpec& d = fleet.disks[i];
    const size_t raises = result.disks[i].passive.healthy_raises;
    if (raises == 0) continue;
    out += fmt::format(R"({}{{"instance":"{}","device":"{}","kind":"{}","raises":{}}})",
                       out.empty() ? "" : ",", InstanceOf(d.host), DeviceOf(d.slot),
                       ToString(d.fault.kind), raises);
  }
  return out;
}

}  // namespace

void PrintSummary(const Fleet& fleet, const RecordedSpread& noise, const FleetResult& result,
                  double seconds, FILE* out) {
  const Totals t = Sum(result);
  using probes::test_data::kLoadShapes, probes::test_data::kStealShapes;
  const std::string load(NameIn<probes::test_data::LoadShape>(kLoadShapes, fleet.spec.load));
  const std::string steal(NameIn<probes::test_data::StealShape>(kStealShapes, fleet.spec.steal));
  const auto share = [&](size_t n) {
    return t.runs == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(t.runs);
  };
  std::fprintf(out,
               "fleet_simulation: %d hosts, %zu disks, %d days, seed %llu, load %s, steal %s; "
               "noise from %zu recorded runs (robust σ of log latency %.3f, %.2f-%.2f × median)\n"
               "  %zu runs judged by JudgeRun in %.1f s: %.0f %% judged, %.0f %% contended\n"
               "  emitted %zu series, %zu samples\n"
               "  passive judge: %zu windows of %lld min, %.0f %% judged; %zu raises on %zu "
               "healthy disks (or before their fault)\n",
               fleet.spec.hosts, fleet.disks.size(), fleet.spec.days,
               static_cast<unsigned long long>(fleet.spec.seed), load.c_str(), steal.c_str(),
               noise.Runs(), noise.LogSigma(), noise.Min(), noise.Max(), t.runs, seconds,
               share(t.judged), share(t.contended), result.lines.series, result.lines.samples,
               t.passive.windows, static_cast<long long>(fleet.spec.passive_window_ms / kMinuteMs),
               t.passive.windows == 0 ? 0.0
                                      : 100.0 * static_cast<double>(t.passive.judged) /
                                            static_cast<double>(t.passive.windows),
               t.passive.healthy_raises, t.passive_raised);
}

bool WriteTruth(const Fleet& fleet, const RecordedSpread& noise, const FleetResult& result,
                const std::string& path) {
  std::string faults;
  for (size_t i = 0; i < fleet.disks.size(); ++i) {
    const DiskSpec& d = fleet.disks[i];
    if (d.fault.kind != FaultKind::kGradual && d.fault.kind != FaultKind::kAbrupt) continue;
    faults += (faults.empty() ? "\n  " : ",\n  ") + FaultJson(fleet, d, result.disks[i]);
  }
  const Totals t = Sum(result);
  std::ofstream out(path);
  out << fmt::format(
      "{{\"hosts\":{},\"disks\":{},\"days\":{},\"seed\":{},\"start\":{},\"end\":{},"
      "\"interval_seconds\":{},\"fingerprint\":\"{}\",\n\"noise\":{{\"runs\":{},\"log_sigma\":{:."
      "4f},"
      "\"min\":{:.3f},\"max\":{:.3f}}},\n\"models\":[{}],\n\"faults\":[{}],\n\"model_fault\":{},\n"
      "\"judge\":{{\"runs\":{},\"judged\":{},\"contended\":{},\"healthy_raises\":{}}},\n"
      "\"passive\":{{\"window_seconds\":{},\"request_cv\":{:.3f},\"windows\":{},\"judged\":{},"
      "\"healthy_raises\":{},\"healthy_raised\":[{}]}},\n"
      "\"emitted\":{{\"series\":{},\"samples\":{}}}}}\n",
      fleet.spec.hosts, fleet.disks.size(), fleet.spec.days, fleet.spec.seed,
      Seconds(fleet.start_ms), Seconds(fleet.spec.end_ms), Seconds(kIntervalMs), kFingerprint,
      noise.Runs(), noise.LogSigma(), noise.Min(), noise.Max(), ModelsJson(fleet), faults,
      ModelFaultJson(fleet, result), t.runs, t.judged, t.contended, t.healthy_raises,
      Seconds(fleet.spec.passive_window_ms), noise.RequestCv(), t.passive.windows, t.passive.judged,
      t.passive.healthy_raises, PassiveHealthyJson(fleet, result), result.lines.series,
      result.lines.samples);
  return static_cast<bool>(out.flush());
}

}  // namespace iowatch::fleet
