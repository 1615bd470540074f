// The block layer's request statuses (include/linux/blk_types.h BLK_STS_*)
// by the names block/blk-core.c's blk_errors[] gives them, which the kernel
// log prints ("<name> error, dev <disk>, …") and the block_io source (eBPF)
// labels its errors with; and which of them say that the device failed a request.
// Thread-safety: constants and pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace iowatch {

struct BlockStatus {
  uint32_t value;
  std::string_view name;
};

// The current kernel's names (values stable since 4.13).
inline constexpr BlockStatus kBlockStatusNames[] = {
    {1, "operation not supported"},   {2, "timeout"},
    {3, "critical space allocation"}, {4, "recoverable transport"},
    {5, "critical target"},           {6, "reservation conflict"},
    {7, "critical medium"},           {8, "protection"},
    {9, "kernel resource"},           {10, "I/O"},
    {11, "dm internal retry"},        {12, "nonblocking retry"},
    {13, "device resource"},          {14, "open zones exceeded"},
    {15, "active zones exceeded"},    {16, "device offline"},
    {17, "duration limit exceeded"},  {18, "invalid"},
};

// Names earlier kernels printed: 6 was "critical nexus" before 6.5.
inline constexpr std::string_view kFormerBlockStatusNames[] = {"critical nexus"};

// Whether a kernel printed `name` for a status: the only kinds an error line
// can have (anything else in that place is not the block layer's line).
constexpr bool IsBlockStatusName(std::string_view name) {
  return std::ranges::find(kBlockStatusNames, name, &BlockStatus::name) !=
             std::end(kBlockStatusNames) ||
         std::ranges::find(kFormerBlockStatusNames, name) != std::end(kFormerBlockStatusNames);
}

// Whether a request of `op` (lower case, as iowatch labels it: "read",
// "write_zeroes") that ended with `status` is the device's failure. Not: a
// request the device does not implement ("operation not supported" for
// anything but a read or a write: mkfs's WRITE_ZEROES on a loop device over
// tmpfs, a DISCARD on a disk without UNMAP, which the kernel and the caller
// fall back from), a request the kernel or its caller got wrong ("invalid"),
// one to be retried ("dm internal retry", "nonblocking retry"), and a zoned
// device's limit on open or active zones the writer exceeded.
constexpr bool IsDeviceFailure(std::string_view status, std::string_view op) {
  if (status == "operation not supported") return op == "read" || op == "write";
  constexpr std::string_view kNotTheDevice[] = {"invalid", "dm internal retry", "nonblocking retry",
                                                "open zones exceeded", "active zones exceeded"};
  return std::ranges::find(kNotTheDevice, status) == std::end(kNotTheDevice);
}

}  // namespace iowatch
