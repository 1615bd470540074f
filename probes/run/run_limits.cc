#include "probes/run/run_limits.h"

#include <algorithm>

namespace iowatch::probes {
namespace {

constexpr std::chrono::nanoseconds kHardLimitGrace = std::chrono::seconds(10);
constexpr std::chrono::nanoseconds kHardLimitWithoutRuntime = std::chrono::minutes(10);

uint64_t ToNs(std::chrono::nanoseconds d) {
  return d.count() > 0 ? static_cast<uint64_t>(d.count()) : 0;
}

}  // namespace

Status ValidateRun(const JobSpec& spec, const RunTarget& target) {
  if (spec.block_size == 0 || spec.block_size > UINT32_MAX) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bs: {} is out of range (1 to 4GiB - 1)", spec.block_size));
  }
  if (spec.iodepth == 0) return MakeError(ErrorCode::kInvalidArgument, "iodepth: must be > 0");
  if (target.region_size / spec.block_size == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("the I/O region of {} bytes holds no whole block of bs={}",
                                 target.region_size, spec.block_size));
  }
  const uint64_t align = target.offset_alignment;
  if (align > 1 && (spec.block_size % align != 0 || target.region_offset % align != 0)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bs={} and offset={} must be multiples of {} bytes on this target",
                                 spec.block_size, target.region_offset, align));
  }
  return {};
}

RunLimits LimitsFor(const JobSpec& spec, uint64_t region_size,
                    std::chrono::nanoseconds hard_limit) {
  RunLimits limits;
  if (!spec.time_based) {
    uint64_t amount = spec.IoAmount();
    if (amount == 0) amount = region_size;
    limits.ios = (amount + spec.block_size - 1) / spec.block_size;
  }
  if (spec.number_ios != 0) limits.ios = std::min(limits.ios, spec.number_ios);
  limits.runtime_ns = ToNs(spec.runtime);
  limits.ramp_ns = ToNs(spec.ramp_time);
  limits.hard_limit_ns = ToNs(hard_limit);
  if (limits.hard_limit_ns == 0) {
    limits.hard_limit_ns =
        limits.ramp_ns + (limits.runtime_ns != 0 ? limits.runtime_ns + ToNs(kHardLimitGrace)
                                                 : ToNs(kHardLimitWithoutRuntime));
  }
  return limits;
}

}  // namespace iowatch::probes
