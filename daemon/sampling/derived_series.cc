#include "daemon/sampling/derived_series.h"

#include <algorithm>
#include <array>

namespace iowatch::daemon {
namespace {

using collectors::IostatRow;
using collectors::VmstatRates;
constexpr auto kSector = static_cast<double>(collectors::kSectorBytes);

#define ROW(field, scale) [](const IostatRow& r) { return r.field scale; }

constexpr const char* kRate =
    "Completed requests per second over the last interval (iostat r/s w/s d/s f/s).";
constexpr const char* kBytes =
    "Bytes per second over the last interval (iostat rkB/s wkB/s dkB/s).";
constexpr const char* kMerged = "Requests merged per second (iostat rrqm/s wrqm/s drqm/s).";
constexpr const char* kMergedRatio =
    "Share of requests merged before issue, 0..1 (iostat %rrqm %wrqm %drqm).";
constexpr const char* kAwait =
    "Average time from issue to completion, seconds (iostat r_await w_await d_await f_await).";
constexpr const char* kSize = "Average request size, bytes (iostat rareq-sz wareq-sz dareq-sz).";

const std::array kIostat = {
    IostatSeries{"r/s", "iowatch_iostat_requests_per_second", kRate, "read", ROW(reads_per_s, *1)},
    IostatSeries{"w/s", "iowatch_iostat_requests_per_second", kRate, "write",
                 ROW(writes_per_s, *1)},
    IostatSeries{"d/s", "iowatch_iostat_requests_per_second", kRate, "discard",
                 ROW(discards_per_s, *1)},
    IostatSeries{"f/s", "iowatch_iostat_requests_per_second", kRate, "flush",
                 ROW(flushes_per_s, *1)},
    IostatSeries{"rkB/s", "iowatch_iostat_bytes_per_second", kBytes, "read",
                 ROW(read_sectors_per_s, *kSector)},
    IostatSeries{"wkB/s", "iowatch_iostat_bytes_per_second", kBytes, "write",
                 ROW(write_sectors_per_s, *kSector)},
    IostatSeries{"dkB/s", "iowatch_iostat_bytes_per_second", kBytes, "discard",
                 ROW(discard_sectors_per_s, *kSector)},
    IostatSeries{"rrqm/s", "iowatch_iostat_merged_requests_per_second", kMerged, "read",
                 ROW(read_merges_per_s, *1)},
    IostatSeries{"wrqm/s", "iowatch_iostat_merged_requests_per_second", kMerged, "write",
                 ROW(write_merges_per_s, *1)},
    IostatSeries{"drqm/s", "iowatch_iostat_merged_requests_per_second", kMerged, "discard",
                 ROW(discard_merges_per_s, *1)},
    IostatSeries{"%rrqm", "iowatch_iostat_merged_ratio", kMergedRatio, "read",
                 ROW(read_merge_pct, / 100)},
    IostatSeries{"%wrqm", "iowatch_iostat_merged_ratio", kMergedRatio, "write",
                 ROW(write_merge_pct, / 100)},
    IostatSeries{"%drqm", "iowatch_iostat_merged_ratio", kMergedRatio, "discard",
                 ROW(discard_merge_pct, / 100)},
    IostatSeries{"r_await", "iowatch_iostat_await_seconds", kAwait, "read",
                 ROW(read_await_ms, / 1000)},
    IostatSeries{"w_await", "iowatch_iostat_await_seconds", kAwait, "write",
                 ROW(write_await_ms, / 1000)},
    IostatSeries{"d_await", "iowatch_iostat_await_seconds", kAwait, "discard",
                 ROW(discard_await_ms, / 1000)},
    IostatSeries{"f_await", "iowatch_iostat_await_seconds", kAwait, "flush",
                 ROW(flush_await_ms, / 1000)},
    IostatSeries{"rareq-sz", "iowatch_iostat_request_size_bytes", kSize, "read",
                 ROW(read_request_sectors, *kSector)},
    IostatSeries{"wareq-sz", "iowatch_iostat_request_size_bytes", kSize, "write",
                 ROW(write_request_sectors, *kSector)},
    IostatSeries{"dareq-sz", "iowatch_iostat_request_size_bytes", kSize, "discard",
                 ROW(discard_request_sectors, *kSector)},
    IostatSeries{"aqu-sz", "iowatch_iostat_queue_size",
                 "Average number of requests in flight (iostat aqu-sz).", nullptr,
                 ROW(queue_size, *1)},
    IostatSeries{"%util", "iowatch_iostat_utilization_ratio",
                 "Share of the interval with at least one request in flight, 0..1 (iostat %util).",
                 nullptr, ROW(util_pct, / 100)},
};
#undef ROW

#define VM(field) [](const VmstatRates& r) { return r.field; }
constexpr const char* kMem =
    "Memory as vmstat shows it, bytes (swpd free buff cache inact active).";
constexpr const char* kCpu =
    "Share of CPU time over the last interval, 0..1 (vmstat us sy id wa st gu).";

const std::array kVmstat = {
    VmstatSeries{"r", "iowatch_vm_procs_running", "Runnable processes (vmstat r).", nullptr,
                 nullptr, VM(procs_running)},
    VmstatSeries{"b", "iowatch_vm_procs_blocked", "Processes blocked on I/O (vmstat b).", nullptr,
                 nullptr, VM(procs_blocked)},
    VmstatSeries{"swpd", "iowatch_vm_memory_bytes", kMem, "state", "swap_used",
                 VM(swap_used_bytes)},
    VmstatSeries{"free", "iowatch_vm_memory_bytes", kMem, "state", "free", VM(free_bytes)},
    VmstatSeries{"buff", "iowatch_vm_memory_bytes", kMem, "state", "buffers", VM(buffers_bytes)},
    VmstatSeries{"cache", "iowatch_vm_memory_bytes", kMem, "state", "cache", VM(cache_bytes)},
    VmstatSeries{"inact", "iowatch_vm_memory_bytes", kMem, "state", "inactive", VM(inactive_bytes)},
    VmstatSeries{"active", "iowatch_vm_memory_bytes", kMem, "state", "active", VM(active_bytes)},
    VmstatSeries{"si", "iowatch_vm_swap_bytes_per_second",
                 "Swapped in / out, bytes per second (vmstat si so).", "direction", "in",
                 VM(swap_in_bytes_per_s)},
    VmstatSeries{"so", "iowatch_vm_swap_bytes_per_second",
                 "Swapped in / out, bytes per second (vmstat si so).", "direction", "out",
                 VM(swap_out_bytes_per_s)},
    VmstatSeries{"bi", "iowatch_vm_io_bytes_per_second",
                 "Paged in from / out to block devices, bytes per second (vmstat bi bo).",
                 "direction", "in", VM(io_in_bytes_per_s)},
    VmstatSeries{"bo", "iowatch_vm_io_bytes_per_second",
                 "Paged in from / out to block devices, bytes per second (vmstat bi bo).",
                 "direction", "out", VM(io_out_bytes_per_s)},
    VmstatSeries{"in", "iowatch_vm_interrupts_per_second", "Interrupts per second (vmstat in).",
                 nullptr, nullptr, VM(interrupts_per_s)},
    VmstatSeries{"cs", "iowatch_vm_context_switches_per_second",
                 "Context switches per second (vmstat cs).", nullptr, nullptr,
                 VM(context_switches_per_s)},
    VmstatSeries{"us", "iowatch_vm_cpu_ratio", kCpu, "mode", "user", VM(user_ratio)},
    VmstatSeries{"sy", "iowatch_vm_cpu_ratio", kCpu, "mode", "system", VM(system_ratio)},
    VmstatSeries{"id", "iowatch_vm_cpu_ratio", kCpu, "mode", "idle", VM(idle_ratio)},
    VmstatSeries{"wa", "iowatch_vm_cpu_ratio", kCpu, "mode", "iowait", VM(iowait_ratio)},
    VmstatSeries{"st", "iowatch_vm_cpu_ratio", kCpu, "mode", "steal", VM(steal_ratio)},
    VmstatSeries{"gu", "iowatch_vm_cpu_ratio", kCpu, "mode", "guest", VM(guest_ratio)},
};
#undef VM

}  // namespace

std::span<const IostatSeries> IostatSeriesTable() { return kIostat; }
std::span<const VmstatSeries> VmstatSeriesTable() { return kVmstat; }

bool Reported(const IostatSeries& series, const collectors::DiskCounters& counters) {
  if (series.op == nullptr) return true;
  const std::string_view op = series.op;
  if (op == "discard") return counters.HasDiscardFields();
  if (op == "flush") return counters.HasFlushFields();
  return true;
}

size_t IostatColumnIndex(std::string_view column) {
  return static_cast<size_t>(std::ranges::find(kIostat, column, &IostatSeries::column) -
                             kIostat.begin());
}

size_t VmstatColumnIndex(std::string_view column) {
  return static_cast<size_t>(std::ranges::find(kVmstat, column, &VmstatSeries::column) -
                             kVmstat.begin());
}

}  // namespace iowatch::daemon
