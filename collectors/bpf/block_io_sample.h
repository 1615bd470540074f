// What the block-layer BPF program has counted since it was loaded, summed
// over CPUs (BlockIoProgram::Read), and the bucket bounds of its histograms
// (block_io_shared.h). Counters only grow while the program stays loaded.
// Thread-safety: plain values and pure functions.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "collectors/bpf/block_io_shared.h"

namespace iowatch::collectors::bpf {

enum class BlockOp { kRead, kWrite, kDiscard, kFlush };
enum class BlockStage { kQueue, kDevice, kTotal };
inline constexpr size_t kBlockOps = IOWATCH_OP_COUNT;
inline constexpr size_t kBlockStages = IOWATCH_STAGE_COUNT;
std::string_view ToString(BlockOp op);        // "read", "write", "discard", "flush"
std::string_view ToString(BlockStage stage);  // "queue", "device", "total"
// Request size classes (block_io_ops.h iowatch_size_class): up to 16 KiB,
// up to 128 KiB, above.
enum class SizeClass { kSmall, kMedium, kLarge };
inline constexpr size_t kSizeClasses = IOWATCH_CLASS_COUNT;
std::string_view ToString(SizeClass size);  // "small", "medium", "large"

inline constexpr size_t kLatencySlots = IOWATCH_LAT_SLOTS;
inline constexpr size_t kCoarseSlots = IOWATCH_COARSE_SLOTS;
inline constexpr size_t kSizeSlots = IOWATCH_SIZE_SLOTS;

// A whole disk and an op.
struct DiskOp {
  uint32_t major = 0;
  uint32_t minor = 0;
  BlockOp op = BlockOp::kRead;
  auto operator<=>(const DiskOp&) const = default;
};

// The kernel's dev_t as the program keys disks (major << 20 | minor).
DiskOp DiskOpOf(uint32_t kernel_dev, uint32_t op);
uint32_t KernelDev(uint32_t major, uint32_t minor);

struct LatencyHistogram {
  uint64_t count = 0;
  uint64_t sum_ns = 0;
  std::array<uint64_t, kLatencySlots> slots{};  // fine, log-linear (LatencySlotBounds)
  std::array<uint64_t, kCoarseSlots> coarse{};  // /metrics' buckets (CoarseLeNs)
  bool operator==(const LatencyHistogram&) const = default;
};

struct RequestStats {
  uint64_t requests = 0;  // the sum of size_slots
  uint64_t bytes = 0;
  uint64_t sequential = 0;
  uint64_t random = 0;
  uint64_t aligned = 0;  // both 0 where the disk has no alignment unit set
  uint64_t unaligned = 0;
  std::array<uint64_t, kSizeSlots> size_slots{};  // SizeSlotUpperBytes
  bool operator==(const RequestStats&) const = default;
};

// The device stage of one size class: requests, their summed latency and
// their bytes. A disk and op's classes add up to its device stage's count.
struct SizeClassStats {
  uint64_t count = 0;
  uint64_t sum_ns = 0;
  uint64_t bytes = 0;
  bool operator==(const SizeClassStats&) const = default;
};
using SizeClasses = std::array<SizeClassStats, kSizeClasses>;  // by SizeClass

struct CgroupIo {
  uint64_t bytes = 0;
  uint64_t requests = 0;
  bool operator==(const CgroupIo&) const = default;
};

// A disk's requests the block layer ended with one status, as the kernel
// logs them (block_rq_error): `op` the REQ_OP as the log prints it, in lower
// case ("read", "write", "write_zeroes"), `error` the status as it prints it
// ("I/O", "critical medium", "timeout"; BlockStatusName).
struct BlockErrorKey {
  uint32_t kernel_dev = 0;  // the whole disk (KernelDev)
  std::string op;
  std::string error;
  auto operator<=>(const BlockErrorKey&) const = default;
};

struct BlockIoSample {
  std::map<std::pair<DiskOp, BlockStage>, LatencyHistogram> latency;
  std::map<DiskOp, RequestStats> requests;
  // The device stage by size class, for the disks and ops with a device stage.
  std::map<DiskOp, SizeClasses> device_classes;
  // By the blkcg's cgroup id (its directory's inode number).
  std::map<std::pair<uint64_t, DiskOp>, CgroupIo> cgroups;
  std::map<BlockErrorKey, uint64_t> errors;
  // The kernel has block_rq_error, so errors are counted (5.x kernels
  // before it: not counted; the kmsg source counts them).
  bool counts_errors = false;
  uint64_t lost_issues = 0;  // requests that found the in-flight map full: no stages
  uint64_t lost_series = 0;  // updates that found a histogram or counter map full
  uint64_t lost_cgroups = 0;
  uint64_t lost_flushes = 0;  // flushes whose end the kernel does not trace: no stages
  // Runs the kernel skipped: the program already running on the CPU (an
  // interrupt's request issued or completed inside it): a request without
  // its issue or its completion.
  uint64_t lost_recursion = 0;
};

// The blk_status_t's name as the kernel log prints it (block/blk-core.c
// blk_errors): 10 -> "I/O", 7 -> "critical medium"; "status N" for a value
// this table does not know.
std::string BlockStatusName(uint32_t status);

// What `now` counted since `before` (an earlier Read of the same loaded
// program): every counter's growth; series absent before count from 0. A
// counter that went backwards (the program was reloaded) counts from 0 too.
BlockIoSample Delta(const BlockIoSample& now, const BlockIoSample& before);

// Fine latency slot `slot`: [low, high) in nanoseconds; the last slot's high
// is nullopt (unbounded).
std::pair<uint64_t, std::optional<uint64_t>> LatencySlotBounds(size_t slot);
// The fine slot of a latency, as the program computes it.
size_t LatencySlotOf(uint64_t ns);
// /metrics' bucket bounds, nanoseconds: i < IOWATCH_COARSE_BOUNDS.
uint64_t CoarseLeNs(size_t i);
// Size slot `slot`'s upper bound in bytes (inclusive); nullopt for the last.
std::optional<uint64_t> SizeSlotUpperBytes(size_t slot);
size_t SizeSlotOf(uint64_t bytes);

// The q quantile (0 < q < 1) of a fine histogram, seconds: the upper bound
// of the slot holding rank ⌈q · count⌉ (the lower bound for the last, open
// slot); nullopt when empty.
std::optional<double> QuantileSeconds(const LatencyHistogram& h, double q);

}  // namespace iowatch::collectors::bpf
