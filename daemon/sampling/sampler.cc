#include "daemon/sampling/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace iowatch::daemon {
namespace {

// The collectors each source reports, for a source that times out before
// its first answer.
constexpr std::array<std::initializer_list<const char*>, kSourceCount> kCollectorsOf = {{
    {"sysfs", "diskstats"},
    {"cgroup"},
    {"stat", "meminfo", "vmstat"},
    {"pressure"},
    {"process_io"},
    {"bpf"},
}};

constexpr double kFirstSampleSeconds = 10;

// The fields `source` fills, from `part` into `out`: moved from a fresh part,
// copied from the previous snapshot (Part is then a const reference).
// Each std::forward moves (or copies) a different member, never `part` twice.
// NOLINTBEGIN(bugprone-use-after-move)
template <typename Part>
void TakeFields(size_t source, Part&& part, Snapshot& out) {
  switch (source) {
    case kDisk:
      out.devices = std::forward<Part>(part).devices;
      out.block_devices = std::forward<Part>(part).block_devices;
      break;
    case kCgroup:
      out.cgroups = std::forward<Part>(part).cgroups;
      break;
    case kVm:
      out.stat = std::forward<Part>(part).stat;
      out.meminfo = std::forward<Part>(part).meminfo;
      out.vmstat = std::forward<Part>(part).vmstat;
      out.has_vm_rates = part.has_vm_rates;
      out.vm_latest = std::forward<Part>(part).vm_latest;
      out.vm_window_max = std::forward<Part>(part).vm_window_max;
      break;
    case kPressure:
      out.pressure = part.pressure;
      break;
    case kProcess:
      out.process_io = std::forward<Part>(part).process_io;
      break;
    default:
      out.block_io = std::forward<Part>(part).block_io;
      break;
  }
}
// NOLINTEND(bugprone-use-after-move)

void Merge(size_t source, Snapshot&& part, Snapshot& out) {
  for (CollectorStatus& status : part.collectors) out.collectors.push_back(std::move(status));
  TakeFields(source, std::move(part), out);
}

}  // namespace

struct Sampler::Sources {
  DiskSource disk;
  CgroupSource cgroup;
  VmSource vm;
  PressureSource pressure;
  ProcessSource process;
  BlockIoSource block_io;

  void Run(size_t source, const FileTree& procfs, const FileTree& sysfs,
           const SourceContext& context, Snapshot& out) {
    switch (source) {
      case kDisk:
        disk.Collect(procfs, sysfs, context, out);
        break;
      case kCgroup:
        cgroup.Collect(procfs, sysfs, context, out);
        break;
      case kVm:
        vm.Collect(procfs, context, out);
        break;
      case kPressure:
        pressure.Collect(procfs, context, out);
        break;
      case kProcess:
        process.Collect(procfs, context, out);
        break;
      default:
        block_io.Collect(procfs, sysfs, context, out);
        break;
    }
  }
};

Sampler::Sampler(SamplerOptions options)
    : options_(std::make_shared<const SamplerOptions>(std::move(options))),
      sources_(std::make_shared<Sources>()) {}

Sampler::~Sampler() = default;

void Sampler::Reconfigure(SamplerOptions options) {
  options_ = std::make_shared<const SamplerOptions>(std::move(options));
}

double Sampler::Now() const {
  return options_->monotonic_seconds ? options_->monotonic_seconds() : MonotonicSeconds();
}

uint64_t Sampler::WindowSamples() const {
  const double samples = std::ceil(options_->window_seconds / options_->interval_seconds);
  return samples < 1 ? 1 : static_cast<uint64_t>(samples);
}

SourceContext Sampler::Context() {
  SourceContext context;
  context.tick = tick_;
  context.window_samples = WindowSamples();
  context.options = options_;
  if (options_->monotonic_seconds) {
    context.now = options_->monotonic_seconds;
  } else {
    context.now = MonotonicSeconds;
  }
  context.devices =
      last_ ? last_->block_devices : std::make_shared<const std::vector<collectors::BlockDevice>>();
  return context;
}

std::array<std::shared_ptr<Snapshot>, kSourceCount> Sampler::CollectBounded(const FileTree& procfs,
                                                                            const FileTree& sysfs) {
  // The first sample has no previous values to serve instead, and walks sysfs
  // whole (a second or more with 10,000 devices): it waits longer.
  const double seconds = tick_ == 1 ? std::max(options_->read_deadline_seconds, kFirstSampleSeconds)
                                    : options_->read_deadline_seconds;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  std::array<std::shared_ptr<Snapshot>, kSourceCount> parts;
  std::array<bool, kSourceCount> started{};
  const SourceContext context = Context();
  for (size_t i = 0; i < kSourceCount; ++i) {
    parts[i] = std::make_shared<Snapshot>();
    // The job owns what it touches: a stuck one may finish after this sample,
    // or after the Sampler is gone.
    started[i] = workers_[i].Start([sources = sources_, part = parts[i], i, procfs, sysfs,
                                    context] { sources->Run(i, procfs, sysfs, context, *part); });
  }
  for (size_t i = 0; i < kSourceCount; ++i) {
    if (!started[i] || !workers_[i].WaitUntil(deadline)) parts[i].reset();
  }
  return parts;
}

void Sampler::ServeStale(SampleSource source, Snapshot& out) {
  // Only this source's fields are copied: with 10,000 devices a whole
  // snapshot is megabytes.
  std::vector<CollectorStatus> statuses;
  if (last_) {
    TakeFields(source, *last_, out);
    for (const CollectorStatus& status : last_->collectors) {
      for (const char* name : kCollectorsOf[source]) {
        if (status.name == name) statuses.push_back(status);
      }
    }
  }
  if (statuses.empty()) {
    if ((source == kCgroup || source == kProcess) && !options_->cgroups.enabled) return;
    if (source == kProcess && options_->process_interval_seconds <= 0) return;
    if (source == kBlockIo && !options_->block_io.enabled) return;
    for (const char* name : kCollectorsOf[source]) statuses.push_back({name, 0, false, 0, {}, {}});
  }
  for (CollectorStatus& status : statuses) {
    status.success = false;
    status.timeouts_total = ++timeouts_[status.name];
    status.error = fmt::format(
        "no answer within {:.3g} s (a read is stuck): the previous sample's values are served",
        options_->read_deadline_seconds);
    out.collectors.push_back(std::move(status));
  }
}

std::shared_ptr<const Snapshot> Sampler::Collect(const FileTree& procfs, const FileTree& sysfs,
                                                 double now_seconds) {
  ++tick_;
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = tick_;
  snapshot->timestamp_seconds = now_seconds;
  snapshot->monotonic_seconds = Now();
  snapshot->interval_seconds = options_->interval_seconds;
  snapshot->window_seconds = options_->window_seconds;
  snapshot->user_hz = options_->user_hz;
  if (options_->read_deadline_seconds > 0) {
    auto parts = CollectBounded(procfs, sysfs);
    for (size_t i = 0; i < kSourceCount; ++i) {
      if (parts[i]) {
        Merge(i, std::move(*parts[i]), *snapshot);
      } else {
        ServeStale(static_cast<SampleSource>(i), *snapshot);
      }
    }
  } else {
    // In order, on this thread: the cgroups see this sample's devices.
    SourceContext context = Context();
    for (size_t i = 0; i < kSourceCount; ++i) {
      Snapshot part;
      sources_->Run(i, procfs, sysfs, context, part);
      if (i == kDisk) context.devices = part.block_devices;
      Merge(i, std::move(part), *snapshot);
    }
  }
  for (CollectorStatus& status : snapshot->collectors) {
    if (const auto it = timeouts_.find(status.name); it != timeouts_.end()) {
      status.timeouts_total = it->second;
    }
  }
  last_ = snapshot;
  return snapshot;
}

}  // namespace iowatch::daemon
