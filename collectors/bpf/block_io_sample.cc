#include "collectors/bpf/block_io_sample.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <utility>

#include "common/block_status.h"
#include "common/enum_names.h"

namespace iowatch::collectors::bpf {
namespace {

constexpr uint64_t kCoarseLeNs[IOWATCH_COARSE_BOUNDS] = IOWATCH_COARSE_LE_NS_INIT;
constexpr uint32_t kMinorBits = 20;

uint64_t Growth(uint64_t now, uint64_t before) { return now >= before ? now - before : now; }

template <size_t N>
void SubtractEach(std::array<uint64_t, N>& now, const std::array<uint64_t, N>& before) {
  for (size_t i = 0; i < N; ++i) now[i] = Growth(now[i], before[i]);
}

void Subtract(LatencyHistogram& now, const LatencyHistogram& before) {
  now.count = Growth(now.count, before.count);
  now.sum_ns = Growth(now.sum_ns, before.sum_ns);
  SubtractEach(now.slots, before.slots);
  SubtractEach(now.coarse, before.coarse);
}

void Subtract(RequestStats& now, const RequestStats& before) {
  now.requests = Growth(now.requests, before.requests);
  now.bytes = Growth(now.bytes, before.bytes);
  now.sequential = Growth(now.sequential, before.sequential);
  now.random = Growth(now.random, before.random);
  now.aligned = Growth(now.aligned, before.aligned);
  now.unaligned = Growth(now.unaligned, before.unaligned);
  SubtractEach(now.size_slots, before.size_slots);
}

void Subtract(SizeClasses& now, const SizeClasses& before) {
  for (size_t i = 0; i < kSizeClasses; ++i) {
    now[i].count = Growth(now[i].count, before[i].count);
    now[i].sum_ns = Growth(now[i].sum_ns, before[i].sum_ns);
    now[i].bytes = Growth(now[i].bytes, before[i].bytes);
  }
}

void Subtract(CgroupIo& now, const CgroupIo& before) {
  now.bytes = Growth(now.bytes, before.bytes);
  now.requests = Growth(now.requests, before.requests);
}

void Subtract(uint64_t& now, uint64_t before) { now = Growth(now, before); }

template <typename Map>
void SubtractMap(Map& now, const Map& before) {
  for (auto& [key, value] : now) {
    if (const auto it = before.find(key); it != before.end()) Subtract(value, it->second);
  }
}

}  // namespace

BlockIoSample Delta(const BlockIoSample& now, const BlockIoSample& before) {
  BlockIoSample out = now;
  SubtractMap(out.latency, before.latency);
  SubtractMap(out.requests, before.requests);
  SubtractMap(out.device_classes, before.device_classes);
  SubtractMap(out.cgroups, before.cgroups);
  SubtractMap(out.errors, before.errors);
  out.lost_issues = Growth(now.lost_issues, before.lost_issues);
  out.lost_series = Growth(now.lost_series, before.lost_series);
  out.lost_cgroups = Growth(now.lost_cgroups, before.lost_cgroups);
  out.lost_flushes = Growth(now.lost_flushes, before.lost_flushes);
  out.lost_recursion = Growth(now.lost_recursion, before.lost_recursion);
  return out;
}

constexpr EnumName<BlockOp> kBlockOpNames[] = {{BlockOp::kRead, "read"},
                                               {BlockOp::kWrite, "write"},
                                               {BlockOp::kDiscard, "discard"},
                                               {BlockOp::kFlush, "flush"}};
static_assert(NamesEveryValue<kBlockOpNames>());

std::string_view ToString(BlockOp op) { return NameIn<BlockOp>(kBlockOpNames, op); }

constexpr EnumName<BlockStage> kBlockStageNames[] = {
    {BlockStage::kQueue, "queue"}, {BlockStage::kDevice, "device"}, {BlockStage::kTotal, "total"}};
static_assert(NamesEveryValue<kBlockStageNames>());

std::string_view ToString(BlockStage stage) { return NameIn<BlockStage>(kBlockStageNames, stage); }

constexpr EnumName<SizeClass> kSizeClassNames[] = {
    {SizeClass::kSmall, "small"}, {SizeClass::kMedium, "medium"}, {SizeClass::kLarge, "large"}};
static_assert(NamesEveryValue<kSizeClassNames>());

std::string_view ToString(SizeClass size) { return NameIn<SizeClass>(kSizeClassNames, size); }

std::string BlockStatusName(uint32_t status) {
  for (const auto& [value, name] : kBlockStatusNames) {  // common/block_status.h
    if (value == status) return std::string(name);
  }
  return fmt::format("status {}", status);
}

DiskOp DiskOpOf(uint32_t kernel_dev, uint32_t op) {
  return DiskOp{kernel_dev >> kMinorBits, kernel_dev & ((1U << kMinorBits) - 1),
                static_cast<BlockOp>(op < kBlockOps ? op : 0)};
}

uint32_t KernelDev(uint32_t major, uint32_t minor) { return major << kMinorBits | minor; }

std::pair<uint64_t, std::optional<uint64_t>> LatencySlotBounds(size_t slot) {
  if (slot == 0) return {0, uint64_t{1} << IOWATCH_LAT_MIN_SHIFT};
  if (slot >= kLatencySlots - 1) return {uint64_t{1} << IOWATCH_LAT_MAX_SHIFT, std::nullopt};
  const size_t index = slot - 1;
  const unsigned power = IOWATCH_LAT_MIN_SHIFT + static_cast<unsigned>(index / IOWATCH_LAT_SUB);
  const uint64_t step = uint64_t{1} << (power - 2);
  const uint64_t low = (uint64_t{1} << power) + (index % IOWATCH_LAT_SUB) * step;
  return {low, low + step};
}

size_t LatencySlotOf(uint64_t ns) {
  if (ns < (uint64_t{1} << IOWATCH_LAT_MIN_SHIFT)) return 0;
  const auto power = static_cast<unsigned>(std::bit_width(ns) - 1);
  if (power >= IOWATCH_LAT_MAX_SHIFT) return kLatencySlots - 1;
  const uint64_t sub = (ns >> (power - 2)) & (IOWATCH_LAT_SUB - 1);
  return 1 + (power - IOWATCH_LAT_MIN_SHIFT) * IOWATCH_LAT_SUB + sub;
}

uint64_t CoarseLeNs(size_t i) { return kCoarseLeNs[i < IOWATCH_COARSE_BOUNDS ? i : 0]; }

std::optional<uint64_t> SizeSlotUpperBytes(size_t slot) {
  if (slot >= kSizeSlots - 1) return std::nullopt;
  return uint64_t{1} << (IOWATCH_SIZE_MIN_SHIFT + slot);
}

size_t SizeSlotOf(uint64_t bytes) {
  if (bytes <= (uint64_t{1} << IOWATCH_SIZE_MIN_SHIFT)) return 0;
  const auto ceil_log2 = static_cast<size_t>(std::bit_width(bytes - 1));
  const size_t slot = ceil_log2 - IOWATCH_SIZE_MIN_SHIFT;
  return slot < kSizeSlots ? slot : kSizeSlots - 1;
}

std::optional<double> QuantileSeconds(const LatencyHistogram& h, double q) {
  uint64_t total = 0;
  for (uint64_t n : h.slots) total += n;
  if (total == 0) return std::nullopt;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));  // 1-based
  uint64_t seen = 0;
  for (size_t slot = 0; slot < kLatencySlots; ++slot) {
    seen += h.slots[slot];
    if (seen >= rank && h.slots[slot] > 0) {
      const auto [low, high] = LatencySlotBounds(slot);
      return static_cast<double>(high.value_or(low)) / 1e9;
    }
  }
  return std::nullopt;
}

}  // namespace iowatch::collectors::bpf
