// The reports of `iowatch biolatency`: per disk and op, the latency
// histogram of one stage as text (bcc's biolatency layout: bucket, count,
// a bar), or every stage with the request sizes and patterns, and the
// device stage by size class, as JSON.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "collectors/bpf/block_io_sample.h"

namespace iowatch::daemon {

// Kernel names of the disks by (major, minor); a disk not in it is shown by
// its numbers.
using DiskNames = std::map<std::pair<uint32_t, uint32_t>, std::string>;

std::string FormatBiolatencyText(const collectors::bpf::BlockIoSample& delta,
                                 collectors::bpf::BlockStage stage, const DiskNames& names,
                                 const std::string& time);
std::string FormatBiolatencyJson(const collectors::bpf::BlockIoSample& delta,
                                 const DiskNames& names, const std::string& time,
                                 double interval_seconds);

}  // namespace iowatch::daemon
