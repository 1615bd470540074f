#include "daemon/sources/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace iowatch::daemon {
namespace {

constexpr double kFirstSampleSeconds = 10;

void Merge(const SourceDescriptor& source, Snapshot&& part, Snapshot& out) {
  for (CollectorStatus& status : part.collectors) out.collectors.push_back(std::move(status));
  source.move_fields(std::move(part), out);
}

}  // namespace

struct Sampler::Sources {
  std::vector<std::unique_ptr<SampleSource>> each;  // in the descriptors' order
};

Sampler::Sampler(SamplerOptions options, std::span<const SourceDescriptor> sources)
    : options_(std::make_shared<const SamplerOptions>(std::move(options))),
      descriptors_(sources),
      sources_(std::make_shared<Sources>()),
      workers_(std::make_unique<BoundedWorker[]>(sources.size())) {
  for (size_t i = 0; i < sources.size(); ++i) {
    sources_->each.push_back(sources[i].make());
    workers_[i].SetName(sources[i].name);
  }
}

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

std::vector<std::shared_ptr<Snapshot>> Sampler::CollectBounded(const FileTree& procfs,
                                                               const FileTree& sysfs) {
  // The first sample has no previous values to serve instead, and walks sysfs
  // whole (a second or more with 10,000 devices): it waits longer.
  const double seconds = tick_ == 1 ? std::max(options_->read_deadline_seconds, kFirstSampleSeconds)
                                    : options_->read_deadline_seconds;
  SourceContext context = Context();
  context.started = std::chrono::steady_clock::now();
  context.deadline =
      context.started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  const auto deadline = context.deadline;
  const size_t count = descriptors_.size();
  std::vector<std::shared_ptr<Snapshot>> parts(count);
  std::vector<bool> started(count);
  for (size_t i = 0; i < count; ++i) {
    parts[i] = std::make_shared<Snapshot>();
    // The job owns what it touches: a stuck one may finish after this sample,
    // or after the Sampler is gone.
    started[i] =
        workers_[i].Start([sources = sources_, part = parts[i], i, procfs, sysfs, context] {
          sources->each[i]->Collect(procfs, sysfs, context, *part);
        });
  }
  for (size_t i = 0; i < count; ++i) {
    if (!started[i] || !workers_[i].WaitUntil(deadline)) parts[i].reset();
  }
  return parts;
}

void Sampler::ServeStale(const SourceDescriptor& source, Snapshot& out) {
  // Only this source's fields are copied: with 10,000 devices a whole
  // snapshot is megabytes.
  std::vector<CollectorStatus> statuses;
  if (last_) {
    source.copy_fields(*last_, out);
    for (const CollectorStatus& status : last_->collectors) {
      if (std::ranges::find(source.collectors, status.name) != source.collectors.end()) {
        statuses.push_back(status);
      }
    }
  }
  if (statuses.empty()) {
    if (!source.enabled(*options_)) return;
    for (const std::string_view name : source.collectors) {
      statuses.push_back({std::string(name), 0, false, 0, {}, {}});
    }
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
    for (size_t i = 0; i < descriptors_.size(); ++i) {
      if (parts[i]) {
        Merge(descriptors_[i], std::move(*parts[i]), *snapshot);
      } else {
        ServeStale(descriptors_[i], *snapshot);
      }
    }
  } else {
    // In order, on this thread: the cgroups see this sample's devices.
    SourceContext context = Context();
    for (size_t i = 0; i < descriptors_.size(); ++i) {
      Snapshot part;
      sources_->each[i]->Collect(procfs, sysfs, context, part);
      Merge(descriptors_[i], std::move(part), *snapshot);
      if (descriptors_[i].discovers_devices) context.devices = snapshot->block_devices;
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
