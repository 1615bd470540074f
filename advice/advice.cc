#include "advice/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "common/enum_names.h"

namespace iowatch::advice {

using collectors::BlockDevice;
using collectors::DiskCounters;
using collectors::MdGeometry;
using collectors::QueueAttributes;

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string Kib(uint64_t bytes) {
  if (bytes % kMiB == 0 && bytes >= kMiB) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
  return fmt::format("{} bytes", bytes);
}

std::string Kib(double bytes) { return fmt::format("{:.1f} KiB", bytes / 1024); }

// md/layout of raid10: near copies in the low byte, far copies in the next.
uint64_t Raid10Copies(uint64_t layout) {
  const uint64_t near = layout & 0xff;
  const uint64_t far = (layout >> 8) & 0xff;
  return std::max<uint64_t>(near, 1) * std::max<uint64_t>(far, 1);
}

std::optional<StripeGeometry> MdStripe(const MdGeometry& md) {
  const uint64_t n = md.raid_disks;
  StripeGeometry s{"md " + md.level, md.chunk_bytes, 0, 0, false};
  if (md.level == "raid0") {
    s.data_disks = n;
  } else if (md.level == "raid4" || md.level == "raid5") {
    s.data_disks = n > 1 ? n - 1 : 0;
    s.parity = true;
  } else if (md.level == "raid6") {
    s.data_disks = n > 2 ? n - 2 : 0;
    s.parity = true;
  } else if (md.level == "raid10") {
    s.data_disks = n / Raid10Copies(md.layout);
  } else {
    return std::nullopt;  // raid1, linear, multipath: no stripe
  }
  if (s.chunk == 0 || s.data_disks == 0) return std::nullopt;
  s.full_stripe = s.chunk * s.data_disks;
  return s;
}

AdviceFinding Finding(const std::string& device, std::string_view name, Severity severity,
                      std::string text, std::string suggestion) {
  return {device, std::string(name), severity, std::move(text), std::move(suggestion)};
}

void FullStripeOverMaxSectors(const DeviceFacts& f, const StripeGeometry& s,
                              std::vector<AdviceFinding>& out) {
  const uint64_t max_bytes = f.disk.queue.max_sectors_kb * 1024;
  if (!s.parity || max_bytes == 0 || s.full_stripe <= max_bytes) return;
  const uint64_t hw = f.disk.queue.max_hw_sectors_kb * 1024;
  std::string suggestion =
      hw >= s.full_stripe
          ? fmt::format(
                "echo {} > /sys/block/{}/queue/max_sectors_kb (max_hw_sectors_kb allows "
                "{})",
                s.full_stripe / 1024, f.disk.name, f.disk.queue.max_hw_sectors_kb)
          : fmt::format(
                "the hardware limit is {} (max_hw_sectors_kb): a chunk of at most {} "
                "would make a full stripe fit",
                Kib(hw), Kib(std::bit_floor(hw / s.data_disks)));  // chunks are powers of two
  out.push_back(
      Finding(f.disk.name, "full_stripe_over_max_sectors", Severity::kWarning,
              fmt::format("the full stripe, {} ({} chunk × {} data disks, {}), is larger than "
                          "max_sectors_kb, {}: no single write request can be a full-stripe write",
                          Kib(s.full_stripe), Kib(s.chunk), s.data_disks, s.source, Kib(max_bytes)),
              std::move(suggestion)));
}

void SmallWritesOnParityRaid(const DeviceFacts& f, const StripeGeometry& s,
                             std::vector<AdviceFinding>& out) {
  const ObservedSizes& o = f.observed;
  if (!s.parity || o.writes == 0) return;
  const bool below = o.writes_below_full_stripe
                         ? *o.writes_below_full_stripe > 0.5
                         : o.average_write_bytes < static_cast<double>(s.full_stripe);
  if (!below) return;
  std::string text =
      o.writes_below_full_stripe
          ? fmt::format("{:.0f} % of {} writes are smaller than the full stripe, {} ({})",
                        100 * *o.writes_below_full_stripe, o.writes, Kib(s.full_stripe), o.source)
          : fmt::format("writes average {}, less than the full stripe, {} ({}, {} writes)",
                        Kib(o.average_write_bytes), Kib(s.full_stripe), o.source, o.writes);
  if (o.writes_unaligned) {
    text += fmt::format("; {:.0f} % are not aligned to it", 100 * *o.writes_unaligned);
  }
  out.push_back(Finding(
      f.disk.name, "small_writes_on_parity_raid", Severity::kWarning,
      text + ": each partial-stripe write reads old data or parity back (read-modify-write)",
      fmt::format("write in multiples of {} aligned to it (application or filesystem stripe "
                  "hints), or use a smaller chunk, or RAID-10 for small random writes",
                  Kib(s.full_stripe))));
}

void PartitionAlignment(const DeviceFacts& f, const std::optional<StripeGeometry>& s,
                        std::vector<AdviceFinding>& out) {
  const uint64_t physical = std::max<uint64_t>(f.disk.queue.physical_block_size, 512);
  for (const PartitionFacts& p : f.partitions) {
    const uint64_t start = p.partition.start_sector * 512;
    const std::string where = fmt::format("{} starts at sector {} ({} bytes)", p.partition.name,
                                          p.partition.start_sector, start);
    std::string fix = fmt::format(
        "recreate {} starting on a 1 MiB boundary (sector {}), as parted and fdisk do by "
        "default, and restore its data",
        p.partition.name, (start + kMiB - 1) / kMiB * (kMiB / 512));
    if (start % physical != 0) {
      out.push_back(Finding(p.partition.name, "partition_misaligned", Severity::kCritical,
                            fmt::format("{}, not a multiple of the physical block, {}: every "
                                        "block-sized write touches two physical blocks",
                                        where, Kib(physical)),
                            std::move(fix)));
    } else if (s && start % s->chunk != 0) {
      out.push_back(Finding(p.partition.name, "partition_misaligned", Severity::kWarning,
                            fmt::format("{}, not a multiple of the stripe unit, {} ({}): "
                                        "chunk-sized I/O spans two disks",
                                        where, Kib(s->chunk), s->source),
                            std::move(fix)));
    } else if (start % kMiB != 0) {
      out.push_back(Finding(p.partition.name, "partition_misaligned", Severity::kInfo,
                            fmt::format("{}, not on a 1 MiB boundary: aligned to what the "
                                        "kernel knows, but not to erase blocks or stripes it "
                                        "does not",
                                        where),
                            std::move(fix)));
    }
  }
}

void FsStripe(const std::string& device, const std::optional<FsStripeHints>& fs,
              const StripeGeometry& s, std::vector<AdviceFinding>& out) {
  if (!fs) return;
  if (fs->stripe_unit == s.chunk && fs->stripe_width == s.full_stripe) return;
  const uint64_t block = std::max<uint64_t>(fs->block_size, 1);
  const std::string fix =
      fs->filesystem == "xfs"
          ? fmt::format(
                "mkfs.xfs -d su={}k,sw={} (XFS takes them at mkfs or mount: sunit={},"
                "swidth={} in 512-byte units)",
                s.chunk / 1024, s.data_disks, s.chunk / 512, s.full_stripe / 512)
          : fmt::format("tune2fs -E stride={},stripe_width={} /dev/{}", s.chunk / block,
                        s.full_stripe / block, device);
  const std::string told = fs->stripe_unit == 0 && fs->stripe_width == 0
                               ? fmt::format("{} was made without stripe hints", fs->filesystem)
                               : fmt::format("{} stripe hints {} and {}", fs->filesystem,
                                             Kib(fs->stripe_unit), Kib(fs->stripe_width));
  out.push_back(Finding(device, "fs_stripe_mismatch", Severity::kWarning,
                        fmt::format("{}; the array's chunk is {} and its full stripe {} ({}): "
                                    "allocation and writeback ignore the stripe",
                                    told, Kib(s.chunk), Kib(s.full_stripe), s.source),
                        fix));
}

void ReadAhead(const DeviceFacts& f, std::vector<AdviceFinding>& out) {
  const ObservedSizes& o = f.observed;
  const uint64_t ra = f.disk.queue.read_ahead_kb * 1024;
  if (o.reads < 1000 || ra == 0 || o.average_read_bytes <= 0) return;
  const double avg = o.average_read_bytes;
  if (avg >= 4 * static_cast<double>(ra)) {
    out.push_back(
        Finding(f.disk.name, "read_ahead_mismatch", Severity::kInfo,
                fmt::format("reads average {} ({}), {:.0f}× read_ahead_kb {}: buffered sequential "
                            "readers get read-ahead-sized requests",
                            Kib(avg), o.source, avg / static_cast<double>(ra), Kib(ra)),
                fmt::format("echo {} > /sys/block/{}/queue/read_ahead_kb",
                            std::bit_ceil(static_cast<uint64_t>(avg)) / 1024, f.disk.name)));
  } else if (static_cast<double>(ra) >= 32 * avg) {
    out.push_back(Finding(
        f.disk.name, "read_ahead_mismatch", Severity::kInfo,
        fmt::format("read_ahead_kb {} is {:.0f}× the average read, {} ({}): a random reader of "
                    "buffered files pays for pages it does not use",
                    Kib(ra), static_cast<double>(ra) / avg, Kib(avg), o.source),
        fmt::format("echo 128 > /sys/block/{}/queue/read_ahead_kb", f.disk.name)));
  }
}

}  // namespace

constexpr EnumName<Severity> kSeverityNames[] = {
    {Severity::kInfo, "info"}, {Severity::kWarning, "warning"}, {Severity::kCritical, "critical"}};
static_assert(NamesEveryValue<kSeverityNames>());

std::string_view ToString(Severity severity) { return NameIn<Severity>(kSeverityNames, severity); }

ObservedSizes ObserveSizes(const DiskCounters& before, const DiskCounters& after,
                           std::string source) {
  ObservedSizes o;
  o.source = std::move(source);
  o.reads = after.reads - before.reads;
  o.writes = after.writes - before.writes;
  const auto average = [](uint64_t sectors, uint64_t requests) {
    return requests > 0 ? static_cast<double>(sectors * 512) / static_cast<double>(requests) : 0.0;
  };
  o.average_read_bytes = average(after.read_sectors - before.read_sectors, o.reads);
  o.average_write_bytes = average(after.write_sectors - before.write_sectors, o.writes);
  return o;
}

std::optional<StripeGeometry> StripeOf(const BlockDevice& disk) {
  if (disk.md) return MdStripe(*disk.md);
  const QueueAttributes& q = disk.queue;
  if (q.optimal_io_size == 0 || q.minimum_io_size == 0 ||
      q.minimum_io_size <= q.physical_block_size || q.optimal_io_size % q.minimum_io_size != 0) {
    return std::nullopt;
  }
  return StripeGeometry{"minimum_io_size and optimal_io_size", q.minimum_io_size,
                        q.optimal_io_size / q.minimum_io_size, q.optimal_io_size, false};
}

std::vector<AdviceFinding> Advise(const DeviceFacts& f) {
  std::vector<AdviceFinding> out;
  const std::optional<StripeGeometry> stripe = StripeOf(f.disk);
  if (stripe) {
    FullStripeOverMaxSectors(f, *stripe, out);
    SmallWritesOnParityRaid(f, *stripe, out);
    FsStripe(f.disk.name, f.filesystem, *stripe, out);
    for (const PartitionFacts& p : f.partitions)
      FsStripe(p.partition.name, p.filesystem, *stripe, out);
  }
  PartitionAlignment(f, stripe, out);
  ReadAhead(f, out);
  return out;
}

}  // namespace iowatch::advice
