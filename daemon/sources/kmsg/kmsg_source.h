// The kmsg source: each sample, the kernel log's new records from /dev/kmsg
// (collectors/kmsg/), read as journald reads them: one reader, non-blocking,
// by sequence number, so that no record is counted twice and a gap (records
// overwritten before they were read) is counted, not guessed. Counts the
// block layer's request errors by device, op and kind, and the page cache's
// "Buffer I/O error" lines apart; only the kernel's records (facility 0), not
// a text a program wrote to /dev/kmsg, and of those only whole lines in the
// kernel's format (collectors/kmsg/kmsg_record.h) naming a block device that
// exists in sysfs: not a message quoting a user's text. The counts and the last record counted
// persist in the state directory for this boot (boot_id): a restarted daemon
// goes on from them instead of counting the ring buffer's errors again, which
// a counter reset would report as new. The kernel rate-limits these lines: a
// storm counts fewer than happened (the bpf collector's count is exact).
// Reports the collector "kmsg"; it fails, with the cause, while the log
// cannot be read (no CAP_SYSLOG where kernel.dmesg_restrict is 1).
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& KmsgSourceDescriptor();

// Its switch (daemon/sources/kmsg/iowatch.yaml documents it), here for the
// commands that run it themselves (iowatch health).
inline constexpr auto kKmsgEnabled = config::BoolSetting("collectors.kmsg.enabled", "true");

// The families it renders (kmsg_families.cc).
void AddKmsgFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
