// A cgroup's block I/O per device, from either hierarchy
// (Documentation/admin-guide/cgroup-v2.rst "io.stat";
// Documentation/admin-guide/cgroup-v1/blkio-controller.rst):
//   v2 io.stat:  "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0"
//   v1 blkio.throttle.io_service_bytes (and io_serviced, counting requests):
//                "8:0 Read 1459200" … "8:0 Discard 0", "8:0 Total 1459200", "Total 1459200"
// v1 counts in the throttle layer: a child cgroup's files stay at zero unless
// a throttle rule exists for the device (docs/metrics.md).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

// What io.cost and io.latency add to a v2 io.stat line where the controller
// is enabled (Documentation/admin-guide/cgroup-v2.rst): cost.usage,
// cost.wait, cost.indebt and cost.indelay are microseconds since the
// cgroup's creation; avg_lat is io.latency's moving average, microseconds.
struct CgroupIoControllers {
  std::optional<uint64_t> cost_usage_us;
  std::optional<uint64_t> cost_wait_us;
  std::optional<uint64_t> cost_indebt_us;
  std::optional<uint64_t> cost_indelay_us;
  std::optional<uint64_t> latency_avg_us;
  bool operator==(const CgroupIoControllers&) const = default;
};

struct CgroupDeviceIo {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t discard_bytes = 0;
  uint64_t discards = 0;
  CgroupIoControllers controllers{};  // v2 only
  bool operator==(const CgroupDeviceIo&) const = default;
};

// Devices in file order, with io.cost's and io.latency's figures where
// present. Other keys (cost.vrate, depth, win, a later kernel's) are ignored; a line without
// "MAJ:MIN" or with a known key whose value is not a number fails with path:line.
Result<std::vector<CgroupDeviceIo>> ParseIoStat(std::string_view text, std::string_view path);

// v1: bytes from io_service_bytes and request counts from io_serviced
// (either text may be empty: the file is then missing). Sync/Async/Total
// lines are sums of Read/Write and are not kept.
Result<std::vector<CgroupDeviceIo>> ParseBlkioThrottle(std::string_view service_bytes,
                                                       std::string_view bytes_path,
                                                       std::string_view serviced,
                                                       std::string_view serviced_path);

}  // namespace iowatch::collectors
