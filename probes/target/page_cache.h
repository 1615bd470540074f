// Starting a buffered measurement cold: the file's dirty pages written and
// its cached pages dropped (posix_fadvise DONTNEED), so that a run measures
// the disk and not what an earlier run left in memory. Used by the sweep's
// buffered points and the trace's what-if replays.
// Best effort: a file that cannot be opened has no pages here to drop.
// Thread-safety: any thread.
#pragma once

#include <string>

namespace iowatch::probes {

void DropCachedPages(const std::string& path);

}  // namespace iowatch::probes
