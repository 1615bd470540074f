#include "cli/biolatency/biolatency_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/terminal_text.h"
#include "common/utf8.h"

namespace iowatch::daemon {
namespace {

using collectors::bpf::BlockIoSample;
using collectors::bpf::BlockStage;
using collectors::bpf::DiskOp;
using collectors::bpf::LatencyHistogram;
using collectors::bpf::RequestStats;
using collectors::bpf::SizeClass;

constexpr size_t kBarWidth = 40;

std::string NameOf(const DiskOp& d, const DiskNames& names) {
  const auto it = names.find({d.major, d.minor});
  return it != names.end() ? it->second : fmt::format("{}:{}", d.major, d.minor);
}

// A bucket bound in microseconds, as short as it stays exact to 0.01 µs.
std::string Micros(uint64_t ns) { return fmt::format("{:g}", static_cast<double>(ns) / 1000); }

std::string Bar(uint64_t count, uint64_t largest) {
  const size_t width = largest == 0 ? 0 : static_cast<size_t>(count * kBarWidth / largest);
  return std::string(width, '*') + std::string(kBarWidth - width, ' ');
}

// The slots from the first to the last that counted anything, one line each.
std::string HistogramText(const LatencyHistogram& h) {
  const auto first = std::ranges::find_if(h.slots, [](uint64_t n) { return n > 0; });
  if (first == h.slots.end()) return "     (no requests)\n";
  const auto last =
      std::ranges::find_if(h.slots.rbegin(), h.slots.rend(), [](uint64_t n) { return n > 0; });
  const uint64_t largest = *std::ranges::max_element(h.slots);
  std::string out = fmt::format("{:>24} : {:<10} distribution\n", "usecs", "count");
  const auto from = static_cast<size_t>(first - h.slots.begin());
  const auto to = static_cast<size_t>(h.slots.rend() - last);
  for (size_t slot = from; slot < to; ++slot) {
    const auto [low, high] = collectors::bpf::LatencySlotBounds(slot);
    const std::string range =
        high ? fmt::format("{} -> {}", Micros(low), Micros(*high)) : Micros(low) + " -> ...";
    out += fmt::format("{:>24} : {:<10} |{}|\n", range, h.slots[slot], Bar(h.slots[slot], largest));
  }
  return out;
}

std::string LatencyJson(const LatencyHistogram& h) {
  std::string buckets;
  for (size_t slot = 0; slot < h.slots.size(); ++slot) {
    if (h.slots[slot] == 0) continue;
    const auto [low, high] = collectors::bpf::LatencySlotBounds(slot);
    buckets += fmt::format(R"({}{{"low_seconds": {}, "high_seconds": {}, "count": {}}})",
                           buckets.empty() ? "" : ", ", static_cast<double>(low) / 1e9,
                           high ? fmt::format("{}", static_cast<double>(*high) / 1e9) : "null",
                           h.slots[slot]);
  }
  return fmt::format(R"({{"count": {}, "sum_seconds": {}, "buckets": [{}]}})", h.count,
                     static_cast<double>(h.sum_ns) / 1e9, buckets);
}

std::string RequestsJson(const RequestStats& r) {
  std::string sizes;
  for (size_t slot = 0; slot < r.size_slots.size(); ++slot) {
    if (r.size_slots[slot] == 0) continue;
    const auto le = collectors::bpf::SizeSlotUpperBytes(slot);
    sizes += fmt::format(R"({}{{"le_bytes": {}, "count": {}}})", sizes.empty() ? "" : ", ",
                         le ? fmt::format("{}", *le) : "null", r.size_slots[slot]);
  }
  return fmt::format(
      R"({{"requests": {}, "bytes": {}, "sequential": {}, "random": {}, "aligned": {}, )"
      R"("unaligned": {}, "sizes": [{}]}})",
      r.requests, r.bytes, r.sequential, r.random, r.aligned, r.unaligned, sizes);
}

// The device stage by size class: `, "device_classes": {…}`, or nothing
// for a disk and op without a device stage.
std::string ClassesJson(const BlockIoSample& delta, const DiskOp& disk_op) {
  const auto it = delta.device_classes.find(disk_op);
  if (it == delta.device_classes.end()) return "";
  std::string classes;
  for (size_t c = 0; c < collectors::bpf::kSizeClasses; ++c) {
    const collectors::bpf::SizeClassStats& s = it->second[c];
    classes += fmt::format(R"({}{}: {{"count": {}, "sum_seconds": {}, "bytes": {}}})",
                           classes.empty() ? "" : ", ",
                           JsonString(collectors::bpf::ToString(SizeClass(c))), s.count,
                           static_cast<double>(s.sum_ns) / 1e9, s.bytes);
  }
  return fmt::format(R"(, "device_classes": {{{}}})", classes);
}

}  // namespace

std::string FormatBiolatencyText(const BlockIoSample& delta, BlockStage stage,
                                 const DiskNames& names, const std::string& time) {
  std::string out =
      fmt::format("{}  block I/O latency, stage {}\n", time, collectors::bpf::ToString(stage));
  for (const auto& [key, h] : delta.latency) {
    if (key.second != stage || h.count == 0) continue;
    out +=
        fmt::format("\ndisk = {}, op = {}: {} requests\n", TerminalText(NameOf(key.first, names)),
                    collectors::bpf::ToString(key.first.op), h.count);
    out += HistogramText(h);
  }
  return out + "\n";
}

std::string FormatBiolatencyJson(const BlockIoSample& delta, const DiskNames& names,
                                 const std::string& time, double interval_seconds) {
  // Every disk and op with a stage or a request: a write that only ended
  // (issued before the interval) has stages and no sizes.
  std::set<DiskOp> disk_ops;
  for (const auto& [key, h] : delta.latency) disk_ops.insert(key.first);
  for (const auto& [disk_op, requests] : delta.requests) disk_ops.insert(disk_op);
  std::string disks;
  for (const DiskOp& disk_op : disk_ops) {
    const auto sizes = delta.requests.find(disk_op);
    const RequestStats requests = sizes == delta.requests.end() ? RequestStats{} : sizes->second;
    std::string stages;
    for (const BlockStage stage : {BlockStage::kQueue, BlockStage::kDevice, BlockStage::kTotal}) {
      const auto it = delta.latency.find({disk_op, stage});
      if (it == delta.latency.end()) continue;
      stages += fmt::format(R"({}{}: {})", stages.empty() ? "" : ", ",
                            JsonString(collectors::bpf::ToString(stage)), LatencyJson(it->second));
    }
    disks +=
        fmt::format(R"({}{{"device": {}, "major": {}, "minor": {}, "op": {}, "latency": {{{}}}, )"
                    R"("requests": {}{}}})",
                    disks.empty() ? "" : ", ", JsonString(NameOf(disk_op, names)), disk_op.major,
                    disk_op.minor, JsonString(collectors::bpf::ToString(disk_op.op)), stages,
                    RequestsJson(requests), ClassesJson(delta, disk_op));
  }
  // What the program could not record in the interval, by cause (block_io_sample.h).
  const std::string lost =
      fmt::format(R"({{"issue": {}, "series": {}, "cgroup": {}, "flush": {}, "recursion": {}}})",
                  delta.lost_issues, delta.lost_series, delta.lost_cgroups, delta.lost_flushes,
                  delta.lost_recursion);
  return fmt::format(R"({{"timestamp": {}, "interval_seconds": {}, "lost": {}, "disks": [{}]}})"
                     "\n",
                     JsonString(time), interval_seconds, lost, disks);
}

}  // namespace iowatch::daemon
