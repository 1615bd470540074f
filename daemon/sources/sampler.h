// Sampler: reads every registered source (registry.h: the disks, per-cgroup
// I/O, the vmstat files, pressure stall information, per-process I/O by
// cgroup, the block-layer BPF program's histograms) once per interval into
// an immutable Snapshot. It knows none of them by name: it walks their
// descriptors (daemon/sampling/sample_source.h).
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

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/file_tree.h"
#include "daemon/sampling/bounded_worker.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sources/registry.h"

namespace iowatch::daemon {

class Sampler {
 public:
  // Reads `sources` (every registered one unless a test says otherwise).
  explicit Sampler(SamplerOptions options,
                   std::span<const SourceDescriptor> sources = RegisteredSources());
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
  struct Sources;  // the sources made from the descriptors, shared with their jobs

  SourceContext Context();
  // Runs every source on its worker; the part each wrote, or null where it
  // timed out or is still stuck.
  std::vector<std::shared_ptr<Snapshot>> CollectBounded(const FileTree& procfs,
                                                        const FileTree& sysfs);
  // The source's share of the previous snapshot into `out`, its collectors
  // marked timed out.
  void ServeStale(const SourceDescriptor& source, Snapshot& out);
  uint64_t WindowSamples() const;
  double Now() const;

  std::shared_ptr<const SamplerOptions> options_;
  uint64_t tick_ = 0;
  std::span<const SourceDescriptor> descriptors_;
  std::shared_ptr<Sources> sources_;
  std::unique_ptr<BoundedWorker[]> workers_;  // one per source
  std::shared_ptr<const Snapshot> last_;
  std::map<std::string, uint64_t, std::less<>> timeouts_;  // per collector, since start
};

}  // namespace iowatch::daemon
