// The block_io source's families (docs/metrics.md): latency and
// request-size histograms on the coarse, fixed buckets the program keeps
// exactly, access pattern and alignment counters per disk and op, and
// per-cgroup bytes and requests, labelled as the iostat and cgroup series.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "daemon/sources/block_io/block_io_source.h"

namespace iowatch::daemon {
namespace {

namespace bpf = collectors::bpf;

size_t BlockLatencyItems(const Snapshot& s) { return s.block_io.latency.size(); }
size_t BlockRequestItems(const Snapshot& s) { return s.block_io.requests.size(); }
size_t BlockCgroupItems(const Snapshot& s) { return s.block_io.cgroups.size(); }
size_t BlockErrorItems(const Snapshot& s) { return s.block_io.errors.size(); }
size_t IfBlockIoCollector(const Snapshot& s) {
  const auto it = std::ranges::find(s.collectors, "bpf", &CollectorStatus::name);
  return it != s.collectors.end() && it->success ? 1 : 0;
}

// le values as Prometheus' clients print them: shortest form, in seconds or bytes.
const std::array<std::string, bpf::kCoarseSlots - 1>& BlockLatencyLe() {
  static const auto le = [] {
    std::array<std::string, bpf::kCoarseSlots - 1> out;
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = fmt::format("{}", static_cast<double>(bpf::CoarseLeNs(i)) / 1e9);
    }
    return out;
  }();
  return le;
}

const std::array<std::string, bpf::kSizeSlots - 1>& BlockSizeLe() {
  static const auto le = [] {
    std::array<std::string, bpf::kSizeSlots - 1> out;
    for (size_t i = 0; i < out.size(); ++i) out[i] = fmt::format("{}", *bpf::SizeSlotUpperBytes(i));
    return out;
  }();
  return le;
}

void BlockLatencyHistogram(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockLatencySeries& h = s.block_io.latency[i];
  Label labels[] = {{"device", h.device},
                    {"op", bpf::ToString(h.op)},
                    {"stage", bpf::ToString(h.stage)},
                    {"le", ""}};
  uint64_t cumulative = 0;
  for (size_t b = 0; b < BlockLatencyLe().size(); ++b) {
    cumulative += h.coarse[b];
    labels[3].value = BlockLatencyLe()[b];
    w.SuffixedSampleInt("_bucket", labels, 4, cumulative);
  }
  cumulative += h.coarse[BlockLatencyLe().size()];
  // The program updates the count before the buckets, and a read copies
  // each CPU's value while it may be updating it: the buckets can hold a
  // request the count does not yet. +Inf is never below a finite bucket.
  const uint64_t count = std::max(h.count, cumulative);
  labels[3].value = "+Inf";
  w.SuffixedSampleInt("_bucket", labels, 4, count);
  w.SuffixedSample("_sum", labels, 3, static_cast<double>(h.sum_ns) / 1e9);
  w.SuffixedSampleInt("_count", labels, 3, count);
}

void BlockSizeHistogram(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockRequestSeries& r = s.block_io.requests[i];
  Label labels[] = {{"device", r.device}, {"op", bpf::ToString(r.op)}, {"le", ""}};
  uint64_t cumulative = 0;
  for (size_t b = 0; b < BlockSizeLe().size(); ++b) {
    cumulative += r.stats.size_slots[b];
    labels[2].value = BlockSizeLe()[b];
    w.SuffixedSampleInt("_bucket", labels, 3, cumulative);
  }
  labels[2].value = "+Inf";
  w.SuffixedSampleInt("_bucket", labels, 3, r.stats.requests);
  w.SuffixedSampleInt("_sum", labels, 2, r.stats.bytes);
  w.SuffixedSampleInt("_count", labels, 2, r.stats.requests);
}

void BlockPattern(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockRequestSeries& r = s.block_io.requests[i];
  const std::string_view op = bpf::ToString(r.op);
  w.SampleInt({{"device", r.device}, {"op", op}, {"pattern", "random"}}, r.stats.random);
  w.SampleInt({{"device", r.device}, {"op", op}, {"pattern", "sequential"}}, r.stats.sequential);
}

void BlockAlignment(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockRequestSeries& r = s.block_io.requests[i];
  if (r.stats.aligned + r.stats.unaligned == 0) return;  // no unit known for the disk
  const std::string_view op = bpf::ToString(r.op);
  w.SampleInt({{"device", r.device}, {"op", op}, {"aligned", "false"}}, r.stats.unaligned);
  w.SampleInt({{"device", r.device}, {"op", op}, {"aligned", "true"}}, r.stats.aligned);
}

template <uint64_t BlockCgroupSeries::*kField>
void BlockCgroupCounter(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockCgroupSeries& c = s.block_io.cgroups[i];
  w.SampleInt(
      {{"cgroup", c.cgroup}, {"unit", c.unit}, {"device", c.device}, {"op", bpf::ToString(c.op)}},
      c.*kField);
}

void BlockErrors(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const BlockErrorSeries& e = s.block_io.errors[i];
  w.SampleInt({{"device", e.device}, {"error", e.error}, {"op", e.op}}, e.requests);
}

template <uint64_t BlockIoSnapshot::*kField>
void BlockScalar(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.block_io.*kField);
}

void BlockLost(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({{"what", "cgroup"}}, s.block_io.lost_cgroups);
  w.SampleInt({{"what", "flush"}}, s.block_io.lost_flushes);
  w.SampleInt({{"what", "issue"}}, s.block_io.lost_issues);
  w.SampleInt({{"what", "recursion"}}, s.block_io.lost_recursion);
  w.SampleInt({{"what", "series"}}, s.block_io.lost_series);
}

}  // namespace

void AddBlockIoFamilies(TableBuilder& t) {
  t.Add("iowatch_block_latency_seconds", "histogram",
        "Time of each request the block layer completed, by stage: queue (start to issue to the "
        "driver), device (issue to completion), total (start to completion, what diskstats' "
        "time adds up). eBPF; whole disks.",
        {BlockLatencyItems, BlockLatencyHistogram});
  t.Add("iowatch_block_request_size_bytes", "histogram",
        "Size of each request the block layer issued to the driver (after merges). eBPF.",
        {BlockRequestItems, BlockSizeHistogram});
  t.Add("iowatch_block_requests_by_pattern_total", "counter",
        "Requests that started where the disk's previous request of the op ended (sequential), "
        "or elsewhere (random). eBPF.",
        {BlockRequestItems, BlockPattern});
  t.Add("iowatch_block_requests_by_alignment_total", "counter",
        "Requests whose start and length are (aligned=\"true\") or are not multiples of the "
        "disk's alignment unit: optimal_io_size, else the md chunk, else physical_block_size. "
        "eBPF.",
        {BlockRequestItems, BlockAlignment});
  t.Add("iowatch_block_cgroup_bytes_total", "counter",
        "Bytes of the requests of the cgroup and its descendants on the disk, by the blkcg the "
        "block layer charged (exited processes and removed child cgroups included). eBPF.",
        {BlockCgroupItems, BlockCgroupCounter<&BlockCgroupSeries::bytes>});
  t.Add("iowatch_block_cgroup_requests_total", "counter",
        "Requests of the cgroup and its descendants on the disk. eBPF.",
        {BlockCgroupItems, BlockCgroupCounter<&BlockCgroupSeries::requests>});
  t.Add("iowatch_block_errors_total", "counter",
        "Requests the block layer ended with an error, where the kernel logs \"<error> error, dev "
        "<device>, … op …:(<OP>)\" (block_rq_error, rate limit aside): by the request's op and "
        "status, as the log names them. eBPF; whole disks; series appear with the first error.",
        {BlockErrorItems, BlockErrors});
  t.Add("iowatch_block_cgroup_dropped_series", "gauge",
        "cgroup x device pairs of the eBPF collector not exported in this sample: over "
        "cgroups.max_series.",
        {IfBlockIoCollector, BlockScalar<&BlockIoSnapshot::cgroup_dropped_series>});
  t.Add("iowatch_block_cgroup_unresolved_bytes_total", "counter",
        "Bytes of cgroups removed before iowatch could name them (created and removed between "
        "two walks of the hierarchy). eBPF.",
        {IfBlockIoCollector, BlockScalar<&BlockIoSnapshot::unresolved_bytes>});
  t.Add("iowatch_block_cgroup_unresolved_requests_total", "counter",
        "Requests of cgroups removed before iowatch could name them. eBPF.",
        {IfBlockIoCollector, BlockScalar<&BlockIoSnapshot::unresolved_requests>});
  t.Add("iowatch_block_lost_total", "counter",
        "Events the BPF program could not record: a map was full (issue: a request without its "
        "queue and device stages; series: a histogram or counter; cgroup), a flush whose end "
        "the kernel does not trace (flush), or the kernel skipped a run because the program was "
        "already running on the CPU (recursion).",
        {IfBlockIoCollector, BlockLost});
}

}  // namespace iowatch::daemon
