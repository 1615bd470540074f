// Sampler: reads every source once per interval into an immutable Snapshot:
// the disks (disk_source.h), per-cgroup I/O (cgroup_source.h), the vmstat
// files (vm_source.h), pressure stall information (pressure_source.h) and
// per-process I/O by cgroup (process_source.h) and the block-layer BPF
// program's histograms (block_io_source.h).
// It never throws and never stops: a source that fails is reported in the
// snapshot's collector status and its series are left out until it reads
// again.
//
// It never hangs either. With a read deadline (serve: half the interval)
// each source runs on its own BoundedWorker, all at once, and the sample
// waits for each until the deadline: a source that has not answered (a
// sysfs attribute of a dying device, a FUSE or NFS mount under an injected
// root) is served from the previous sample, its collectors marked failed and
// their timeouts counted; while its read stays stuck, later samples do not
// wait for it at all. The first sample, with nothing to serve instead and a
// whole sysfs walk to do, waits up to 10 s. Without a deadline (the CLI, tests) the sources run in
// order on the caller's thread.
// `serve` calls it on a thread of its own (daemon/serve/app.cc), so that even
// the wait for a deadline never holds the event loop that answers scrapes.
// Thread-safety: not thread-safe; one caller (the sampling thread) at a time.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>

#include "common/file_tree.h"
#include "daemon/sampling/block_io_source.h"
#include "daemon/sampling/bounded_worker.h"
#include "daemon/sampling/cgroup_source.h"
#include "daemon/sampling/disk_source.h"
#include "daemon/sampling/pressure_source.h"
#include "daemon/sampling/process_source.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/vm_source.h"

namespace iowatch::daemon {

// The sources, in the order their collectors appear in a snapshot.
enum SampleSource : size_t { kDisk, kCgroup, kVm, kPressure, kProcess, kBlockIo, kSourceCount };

class Sampler {
 public:
  explicit Sampler(SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Takes one sample. `now_seconds` is the wall-clock time to stamp it with.
  std::shared_ptr<const Snapshot> Collect(const FileTree& procfs, const FileTree& sysfs,
                                          double now_seconds);

  // New filters, window or deadline on config reload; history is kept (each
  // source takes the new options with its next read).
  void Reconfigure(SamplerOptions options);

 private:
  struct Sources;  // the sources, shared with their jobs

  SourceContext Context();
  // Runs every source on its worker; the part each wrote, or null where it
  // timed out or is still stuck.
  std::array<std::shared_ptr<Snapshot>, kSourceCount> CollectBounded(const FileTree& procfs,
                                                                     const FileTree& sysfs);
  // The source's share of the previous snapshot into `out`, its collectors
  // marked timed out.
  void ServeStale(SampleSource source, Snapshot& out);
  uint64_t WindowSamples() const;
  double Now() const;

  std::shared_ptr<const SamplerOptions> options_;
  uint64_t tick_ = 0;
  std::shared_ptr<Sources> sources_;
  std::array<BoundedWorker, kSourceCount> workers_;
  std::shared_ptr<const Snapshot> last_;
  std::map<std::string, uint64_t, std::less<>> timeouts_;  // per collector, since start
};

}  // namespace iowatch::daemon
