// ProcessSource: storage I/O per cgroup from /proc/PID/io, where the cgroup
// files cannot tell (cgroup v1 without a throttle rule): every process's
// read_bytes, write_bytes and cancelled_write_bytes (collectors/
// process_io.h), their growth since the last reading summed per cgroup of
// systemd's tree cut to cgroups.depth, as counters of what surviving
// processes did and as rates over the interval. Read every
// cgroups.process_interval (it walks every process: its cost is the
// "process_io" collector's duration); samples in between carry the last
// reading. A process is its pid and start time: one that appears between two
// readings counts all its I/O; one that moves to another cgroup counts its
// growth there, its past staying where it was counted; one that exits between
// two readings takes its last interval with it unless its parent is seen (a
// parent that reaps a child takes its counts: reaped_io.h); a process iowatch may not read
// (another user's, without ptrace-read access) is counted as unreadable,
// never guessed. Never a per-PID series. At most cgroups.max_series cgroups
// are kept: a new one takes the place of the one whose processes are all
// gone since the longest (a transient unit's series ends), and is dropped,
// counted, when every kept cgroup still has a process.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& ProcessSourceDescriptor();

// The families it renders (process_families.cc).
void AddProcessFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
