#include "probes/sweep/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/json_integer.h"

namespace iowatch::probes {
namespace {

using nlohmann::json;

json PointJson(const SweepPoint& p) {
  return {{"mode", ToString(p.mode)},
          {"rw", p.write ? "write" : "read"},
          {"pattern", p.random ? "random" : "sequential"},
          {"bs", p.block_size},
          {"iodepth", p.iodepth}};
}

SweepPoint PointFrom(const json& j) {
  SweepPoint p;
  const auto mode = ValueIn<SweepMode>(kSweepModes, j.at("mode").get<std::string>());
  if (!mode) {
    throw json::other_error::create(
        501, "mode: expected " + NamesIn<SweepMode>(kSweepModes, ", ", " or "), &j);
  }
  p.mode = *mode;
  p.write = j.at("rw").get<std::string>() == "write";
  p.random = j.at("pattern").get<std::string>() == "random";
  p.block_size = IntegerOf<uint64_t>(j.at("bs"));
  p.iodepth = IntegerOf<uint32_t>(j.at("iodepth"));
  return p;
}

json SampleJson(const SweepSample& s) {
  json j = PointJson(s.point);
  const SweepMeasure& m = s.measure;
  j["iops"] = m.iops;
  j["bw_bytes"] = m.bytes_per_second;
  j["lat_p50_ns"] = m.lat_p50_ns;
  j["lat_p99_ns"] = m.lat_p99_ns;
  j["clat_p50_ns"] = m.clat_p50_ns;
  j["clat_p99_ns"] = m.clat_p99_ns;
  j["cpu_percent"] = m.cpu_percent;
  j["cpu_seconds_per_gib"] = m.cpu_seconds_per_gib;
  j["end"] = m.end;
  return j;
}

SweepSample SampleFrom(const json& j) {
  SweepSample s{PointFrom(j), {}};
  s.measure.iops = j.at("iops").get<double>();
  s.measure.bytes_per_second = j.at("bw_bytes").get<double>();
  // lat since the sweep judges total latency; a sweep stored before has clat only.
  s.measure.lat_p50_ns = j.contains("lat_p50_ns") ? IntegerOf<uint64_t>(j.at("lat_p50_ns")) : 0;
  s.measure.lat_p99_ns = j.contains("lat_p99_ns") ? IntegerOf<uint64_t>(j.at("lat_p99_ns")) : 0;
  s.measure.clat_p50_ns = IntegerOf<uint64_t>(j.at("clat_p50_ns"));
  s.measure.clat_p99_ns = IntegerOf<uint64_t>(j.at("clat_p99_ns"));
  s.measure.cpu_percent = j.at("cpu_percent").get<double>();
  s.measure.cpu_seconds_per_gib = j.at("cpu_seconds_per_gib").get<double>();
  s.measure.end = j.at("end").get<std::string>();
  return s;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::ranges::sort(values);
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

std::string SweepJson(const SweepReport& r) {
  json j = {{"iowatch_sweep", 1},
            {"started_unix_ms", r.started_unix_ms},
            {"target", r.target},
            {"device", r.device},
            {"identity", r.identity},
            {"engine", r.engine},
            {"size", r.size},
            {"budget_ms", r.budget_ms},
            {"point_runtime_ms", r.point_runtime_ms},
            {"latency", ToString(r.latency)},
            {"points", json::array()},
            {"findings", json::array()}};
  for (const SweepSample& s : r.samples) j["points"].push_back(SampleJson(s));
  for (const SweepFinding& f : r.findings) {
    json fj = PointJson(f.point);
    fj["kind"] = f.kind;
    fj["value"] = f.value;
    fj["ratio"] = f.ratio;
    fj["text"] = f.text;
    j["findings"].push_back(std::move(fj));
  }
  // A target path need not be UTF-8 (a Latin-1 file name): its invalid bytes
  // become U+FFFD, as everywhere iowatch writes JSON, instead of dump()
  // throwing (`iowatch sweep -o json` died after the whole sweep had run).
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<SweepReport> ParseSweepJson(std::string_view text) {
  try {
    const json j = json::parse(text);
    if (IntegerOf<int>(j.at("iowatch_sweep")) != 1) {
      return MakeError(ErrorCode::kParse, "iowatch_sweep: expected format 1");
    }
    SweepReport r;
    r.started_unix_ms = IntegerOf<int64_t>(j.at("started_unix_ms"));
    r.target = j.at("target").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.identity = j.at("identity").get<std::string>();
    r.engine = j.at("engine").get<std::string>();
    r.size = IntegerOf<uint64_t>(j.at("size"));
    r.budget_ms = IntegerOf<int64_t>(j.at("budget_ms"));
    r.point_runtime_ms = IntegerOf<int64_t>(j.at("point_runtime_ms"));
    const auto latency =
        ValueIn<SweepLatency>(kSweepLatencies, j.value("latency", std::string("clat")));
    if (!latency) {
      return MakeError(ErrorCode::kParse, "a sweep's JSON: latency: expected " +
                                              NamesIn<SweepLatency>(kSweepLatencies, ", ", " or "));
    }
    r.latency = *latency;
    for (const json& p : j.at("points")) r.samples.push_back(SampleFrom(p));
    for (const json& f : j.at("findings")) {
      r.findings.push_back({f.at("kind").get<std::string>(), PointFrom(f),
                            f.at("value").get<double>(), f.at("ratio").get<double>(),
                            f.at("text").get<std::string>()});
    }
    return r;
  } catch (const json::exception& e) {
    return MakeError(ErrorCode::kParse, std::string("a sweep's JSON: ") + e.what());
  }
}

std::string CompareSweeps(const SweepReport& a, const SweepReport& b, SweepLatency latency) {
  using Key = std::tuple<SweepMode, bool, bool, uint64_t, uint32_t>;
  std::map<Key, const SweepSample*> in_a;
  for (const SweepSample& s : a.samples) {
    in_a[{s.point.mode, s.point.write, s.point.random, s.point.block_size, s.point.iodepth}] = &s;
  }
  std::string out = fmt::format("A: {} {} ({})\nB: {} {} ({})\n", a.device, a.identity, a.target,
                                b.device, b.identity, b.target);
  const std::string_view kind = ToString(latency);
  out +=
      fmt::format("{:<32} {:>12} {:>12} {:>6} {:>13} {:>13} {:>6}\n", "point", "A bw", "B bw",
                  "B/A", fmt::format("A {} p99 µs", kind), fmt::format("B {} p99 µs", kind), "B/A");
  const auto micros = [](uint64_t ns) {
    return ns > 0 ? fmt::format("{:.0f}", static_cast<double>(ns) / 1e3) : std::string("-");
  };
  std::vector<double> bw_ratios;
  std::vector<double> p99_ratios;
  for (const SweepSample& s : b.samples) {
    const auto it = in_a.find(
        {s.point.mode, s.point.write, s.point.random, s.point.block_size, s.point.iodepth});
    if (it == in_a.end()) continue;
    const SweepMeasure& ma = it->second->measure;
    const SweepMeasure& mb = s.measure;
    const double bw = ma.bytes_per_second > 0 ? mb.bytes_per_second / ma.bytes_per_second : 0;
    const uint64_t pa = ma.P99(latency);
    const uint64_t pb = mb.P99(latency);
    const double p99 = pa > 0 && pb > 0 ? static_cast<double>(pb) / static_cast<double>(pa) : 0;
    if (bw > 0) bw_ratios.push_back(bw);
    if (p99 > 0) p99_ratios.push_back(p99);
    out += fmt::format("{:<32} {:>12} {:>12} {:>6.2f} {:>13} {:>13} {:>6}\n", PointName(s.point),
                       RateText(ma.bytes_per_second), RateText(mb.bytes_per_second), bw, micros(pa),
                       micros(pb), p99 > 0 ? fmt::format("{:.2f}", p99) : std::string("-"));
  }
  out += fmt::format("{} points in both; median B/A: bandwidth {:.2f}, {} p99 {:.2f}\n",
                     bw_ratios.size(), Median(bw_ratios), kind, Median(p99_ratios));
  return out;
}

}  // namespace iowatch::probes
