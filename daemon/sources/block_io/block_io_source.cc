#include "daemon/sources/block_io/block_io_source.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "collectors/bpf/block_io_counters.h"
#include "collectors/bpf/block_io_program.h"
#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sources/block_io/block_io_cgroups.h"

namespace iowatch::daemon {
namespace {

class BlockIoSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // Loads the program unless loaded, or failed with these options; the error.
  std::optional<std::string> EnsureLoaded(const SourceContext& context);
  // Sets the alignment unit of new disks, clears that of disks gone.
  void Align(const std::vector<collectors::BlockDevice>& devices);
  void Export(const collectors::bpf::BlockIoSample& sample,
              const std::unordered_map<uint32_t, std::string>& names, bool queue_stage,
              BlockIoSnapshot& out) const;

  std::unique_ptr<collectors::bpf::BlockIoCounters> counters_;
  std::optional<std::string> load_error_;
  std::shared_ptr<const SamplerOptions> loaded_for_;  // the options the last load was tried with
  std::map<uint32_t, uint32_t> alignment_;            // KernelDev -> unit set in the program
  std::optional<collectors::bpf::BlockIoSample> previous_;
  std::optional<collectors::CgroupLayout> layout_;
  BlockIoCgroups cgroups_;
};

}  // namespace
namespace {

namespace bpf = collectors::bpf;

// What the kernel side counts beyond the device and total stages: cgroups'
// bytes where the cgroup series are wanted, the queue stage where exported.
bpf::BlockIoProgram::LoadOptions LoadOptionsOf(const SamplerOptions& options) {
  return {.count_cgroups = options.cgroups.enabled,
          .count_queue_stage = options.settings.Get<bool>(kBpfQueueStage)};
}

Result<std::unique_ptr<bpf::BlockIoCounters>> LoadProgram(const SamplerOptions& options) {
  auto program = bpf::BlockIoProgram::Load(LoadOptionsOf(options));
  if (!program) return ErrorOf(std::move(program));
  return std::make_unique<bpf::BlockIoProgram>(std::move(*program));
}

// A stage's histogram over the interval since `before` (nullptr: since load).
bpf::LatencyHistogram Growth(const bpf::LatencyHistogram& now,
                             const bpf::LatencyHistogram* before) {
  bpf::LatencyHistogram growth = now;
  if (before == nullptr || before->count > now.count) return growth;  // reloaded: all is new
  growth.count -= before->count;
  for (size_t i = 0; i < bpf::kLatencySlots; ++i) growth.slots[i] -= before->slots[i];
  return growth;
}

// The disks the program counts that are not wanted (filtered out, or gone).
std::vector<uint32_t> Unwanted(const bpf::BlockIoSample& sample,
                               const std::unordered_map<uint32_t, std::string>& names) {
  std::set<uint32_t> unwanted;
  const auto note = [&](const bpf::DiskOp& disk) {
    const uint32_t dev = bpf::KernelDev(disk.major, disk.minor);
    if (!names.contains(dev)) unwanted.insert(dev);
  };
  for (const auto& [key, histogram] : sample.latency) note(key.first);
  for (const auto& [disk, stats] : sample.requests) note(disk);
  for (const auto& [key, count] : sample.errors) note(bpf::DiskOpOf(key.kernel_dev, 0));
  return {unwanted.begin(), unwanted.end()};
}

}  // namespace

std::optional<std::string> BlockIoSource::EnsureLoaded(const SourceContext& context) {
  if (counters_) {
    // A reload keeps the program and its counts; what it counts follows.
    const bpf::BlockIoProgram::LoadOptions wanted = LoadOptionsOf(*context.options);
    counters_->SetCounting(wanted.count_cgroups, wanted.count_queue_stage);
    return std::nullopt;
  }
  // A failure stands until the config is loaded again: no retry per sample.
  if (load_error_ && loaded_for_ == context.options) return load_error_;
  loaded_for_ = context.options;
  const auto& load = context.options->block_io.load;
  auto counters = load ? load() : LoadProgram(*context.options);
  if (!counters) {
    load_error_ = counters.error().ToString();
    return load_error_;
  }
  counters_ = std::move(*counters);
  load_error_.reset();
  alignment_.clear();
  previous_.reset();
  // A new program counts from 0, every series with it: totals kept for an
  // earlier program (gone cgroups' counts) would make an ancestor's counter
  // restart at them instead, a fall Prometheus reads as a reset plus a rise
  // the size of everything retired.
  cgroups_ = BlockIoCgroups();
  return std::nullopt;
}

void BlockIoSource::Align(const std::vector<collectors::BlockDevice>& devices) {
  std::map<uint32_t, uint32_t> wanted;
  for (const collectors::BlockDevice& d : devices) {
    if (d.is_partition || d.malformed_dev) continue;
    const uint64_t unit = collectors::AlignmentUnitBytes(d);
    if (unit > 0 && unit <= UINT32_MAX) {
      wanted.emplace(bpf::KernelDev(d.major, d.minor), static_cast<uint32_t>(unit));
    }
  }
  for (const auto& [dev, unit] : alignment_) {
    // A disk gone: a new one given its number must not inherit its unit.
    if (!wanted.contains(dev)) (void)counters_->SetAlignment(dev >> 20, dev & 0xfffff, 0);
  }
  std::erase_if(alignment_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  for (const auto& [dev, unit] : wanted) {
    const auto set = alignment_.find(dev);
    if (set != alignment_.end() && set->second == unit) continue;
    if (counters_->SetAlignment(dev >> 20, dev & 0xfffff, unit)) alignment_[dev] = unit;
  }
}

void BlockIoSource::Export(const bpf::BlockIoSample& sample,
                           const std::unordered_map<uint32_t, std::string>& names, bool queue_stage,
                           BlockIoSnapshot& out) const {
  for (const auto& [key, histogram] : sample.latency) {
    const auto& [disk_op, stage] = key;
    const auto name = names.find(bpf::KernelDev(disk_op.major, disk_op.minor));
    if (name == names.end()) continue;
    if (stage == bpf::BlockStage::kQueue && !queue_stage) continue;
    const bpf::LatencyHistogram* before = nullptr;
    if (previous_) {
      const auto it = previous_->latency.find(key);
      if (it != previous_->latency.end()) before = &it->second;
    }
    const bpf::LatencyHistogram growth = Growth(histogram, before);
    out.latency.push_back({name->second, disk_op.op, stage, histogram.count, histogram.sum_ns,
                           histogram.coarse, bpf::QuantileSeconds(growth, 0.5),
                           bpf::QuantileSeconds(growth, 0.99)});
  }
  for (const auto& [disk_op, stats] : sample.requests) {
    const auto name = names.find(bpf::KernelDev(disk_op.major, disk_op.minor));
    if (name == names.end() || disk_op.op == bpf::BlockOp::kFlush) continue;
    out.requests.push_back({name->second, disk_op.op, stats});
  }
  for (const auto& [disk_op, classes] : sample.device_classes) {
    const auto name = names.find(bpf::KernelDev(disk_op.major, disk_op.minor));
    if (name != names.end()) out.device_classes.push_back({name->second, disk_op.op, classes});
  }
  const auto by_name = [](const auto& a, const auto& b) {
    return std::tie(a.device, a.op) < std::tie(b.device, b.op);
  };
  for (const auto& [key, count] : sample.errors) {
    const auto name = names.find(key.kernel_dev);
    if (name != names.end()) out.errors.push_back({name->second, key.op, key.error, count});
  }
  std::ranges::sort(out.errors, [](const auto& a, const auto& b) {
    return std::tie(a.device, a.op, a.error) < std::tie(b.device, b.op, b.error);
  });
  std::ranges::stable_sort(out.latency, by_name);  // stages stay in order within a disk and op
  std::ranges::sort(out.requests, by_name);
  std::ranges::sort(out.device_classes, by_name);
  out.lost_issues = sample.lost_issues;
  out.lost_series = sample.lost_series;
  out.lost_cgroups = sample.lost_cgroups;
  out.lost_flushes = sample.lost_flushes;
  out.lost_recursion = sample.lost_recursion;
}

void BlockIoSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                            const SourceContext& context, Snapshot& out) {
  if (!context.options->settings.Get<bool>(kBpfEnabled)) {
    counters_.reset();  // unloads: the tracepoints cost nothing from here on
    load_error_.reset();
    loaded_for_.reset();
    previous_.reset();
    return;
  }
  const double start = context.now();
  CollectorStatus status{"bpf", 0, false, 0, {}, {}};
  const auto finish = [&] {
    status.duration_seconds = context.now() - start;
    out.collectors.push_back(std::move(status));
  };
  if (auto error = EnsureLoaded(context)) {
    status.error = std::move(*error);
    return finish();
  }
  Align(*context.devices);
  auto sample = counters_->Read();
  if (!sample) {
    status.error = sample.error().ToString();
    return finish();
  }
  std::unordered_map<uint32_t, std::string> names;  // the wanted whole disks
  for (const collectors::BlockDevice& d : *context.devices) {
    if (!d.is_partition && !d.malformed_dev)
      names.emplace(bpf::KernelDev(d.major, d.minor), d.name);
  }
  Export(*sample, names, context.options->settings.Get<bool>(kBpfQueueStage), out.block_io);
  if (auto forgot = counters_->ForgetDisks(Unwanted(*sample, names)); !forgot) {
    status.parse_error = forgot.error().ToString();
  }
  if (context.options->cgroups.enabled) {
    if (!layout_) {
      auto layout = collectors::DetectCgroupLayout(procfs, sysfs);
      if (layout) layout_ = std::move(*layout);
    }
    if (layout_) {
      const std::vector<uint64_t> gone = cgroups_.Update(
          sysfs, *layout_, *sample, names, context.options->cgroups, context.tick, out.block_io);
      if (auto forgot = counters_->ForgetCgroups(gone); !forgot) {
        status.parse_error = forgot.error().ToString();
      }
    }
  }
  previous_ = std::move(*sample);
  status.success = true;
  finish();
}

namespace {

constexpr config::Setting kBpfSettings[] = {kBpfEnabled, kBpfQueueStage};

// check-config: the program is loaded once, as serve would, and unloaded.
std::optional<std::string> CannotLoad(const SamplerOptions& options) {
  auto counters = options.block_io.load ? options.block_io.load() : LoadProgram(options);
  if (counters) return std::nullopt;
  return counters.error().ToString();
}

}  // namespace

const SourceDescriptor& BlockIoSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"bpf"};
  static constexpr SourceDescriptor kDescriptor = Registered<BlockIoSource, &Snapshot::block_io>({
      .name = "block_io",
      .reads = "the block layer, through its BPF program (collectors/bpf/block_io.bpf.c)",
      .collectors = kCollectors,
      .config_switch = kBpfEnabled.key,
      .settings = kBpfSettings,
      .enabled = [](const SamplerOptions& o) { return o.settings.Get<bool>(kBpfEnabled); },
      .add_families = AddBlockIoFamilies,
      .cannot_run_here = CannotLoad,
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
