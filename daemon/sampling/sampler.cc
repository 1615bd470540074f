#include "daemon/sampling/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/clock.h"

namespace iowatch::daemon {
namespace {

// The collectors each source reports, for a source that times out before
// its first answer.
constexpr std::array<std::initializer_list<const char*>, 5> kCollectorsOf = {{
    {"sysfs", "diskstats"},
    {"cgroup"},
    {"stat", "meminfo", "vmstat"},
    {"pressure"},
    {"process_io"},
}};

constexpr double kFirstSampleSeconds = 10;

// Moves the fields `source` fills from `part` into `out`.
void Merge(size_t source, Snapshot& part, Snapshot& out) {
  switch (source) {
    case 0:
      out.devices = std::move(part.devices);
      out.block_devices = std::move(part.block_devices);
      break;
    case 1:
      out.cgroups = std::move(part.cgroups);
      break;
    case 2:
      out.stat = std::move(part.stat);
      out.meminfo = std::move(part.meminfo);
      out.vmstat = std::move(part.vmstat);
      out.has_vm_rates = part.has_vm_rates;
      out.vm_latest = std::move(part.vm_latest);
      out.vm_window_max = std::move(part.vm_window_max);
      break;
    case 3:
      out.pressure = part.pressure;
      break;
    default:
      out.process_io = std::move(part.process_io);
      break;
  }
  for (CollectorStatus& status : part.collectors) out.collectors.push_back(std::move(status));
}

}  // namespace

struct Sampler::Sources {
  DiskSource disk;
  CgroupSource cgroup;
  VmSource vm;
  PressureSource pressure;
  ProcessSource process;

  void Run(size_t source, const FileTree& procfs, const FileTree& sysfs,
           const SourceContext& context, Snapshot& out) {
    switch (source) {
      case 0:
        disk.Collect(procfs, sysfs, context, out);
        break;
      case 1:
        cgroup.Collect(procfs, sysfs, context, out);
        break;
      case 2:
        vm.Collect(procfs, context, out);
        break;
      case 3:
        pressure.Collect(procfs, context, out);
        break;
      default:
        process.Collect(procfs, context, out);
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

std::array<std::shared_ptr<Snapshot>, Sampler::kSourceCount> Sampler::CollectBounded(
    const FileTree& procfs, const FileTree& sysfs) {
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

void Sampler::ServeStale(SourceIndex source, Snapshot& out) {
  Snapshot previous;
  if (last_) {
    previous = *last_;
    previous.collectors.clear();
    for (const CollectorStatus& status : last_->collectors) {
      for (const char* name : kCollectorsOf[source]) {
        if (status.name == name) previous.collectors.push_back(status);
      }
    }
  }
  if (previous.collectors.empty()) {
    if ((source == kCgroup || source == kProcess) && !options_->cgroups.enabled) return;
    if (source == kProcess && options_->process_interval_seconds <= 0) return;
    for (const char* name : kCollectorsOf[source]) {
      previous.collectors.push_back({name, 0, false, 0, {}, {}});
    }
  }
  for (CollectorStatus& status : previous.collectors) {
    status.success = false;
    status.timeouts_total = ++timeouts_[status.name];
    status.error = fmt::format(
        "no answer within {:.3g} s (a read is stuck): the previous sample's values are served",
        options_->read_deadline_seconds);
  }
  Merge(source, previous, out);
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
        Merge(i, *parts[i], *snapshot);
      } else {
        ServeStale(static_cast<SourceIndex>(i), *snapshot);
      }
    }
  } else {
    // In order, on this thread: the cgroups see this sample's devices.
    SourceContext context = Context();
    for (size_t i = 0; i < kSourceCount; ++i) {
      Snapshot part;
      sources_->Run(i, procfs, sysfs, context, part);
      if (i == kDisk) context.devices = part.block_devices;
      Merge(i, part, *snapshot);
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
