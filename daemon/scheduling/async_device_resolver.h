// Which device a job's target lands on, looked up on a thread of its own: the
// lookup stat()s the target path (ResolveProbeDevice), and a stat() on a hung
// filesystem (a dead NFS server, a stuck FUSE daemon) does not return. Done
// by the scheduler on the event loop, under its mutex, it stopped /metrics
// and /healthz with it. Here the loop waits for an answer at most
// `max_wait` and otherwise goes on with the last one known (nullopt before
// the first: the job then runs as on an unknown device, serialised with the
// other unknown ones and without the busy check).
// Thread-safety: Resolve may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "daemon/scheduling/device_busy.h"
#include "probes/spec/job_spec.h"

namespace iowatch::daemon {

class AsyncDeviceResolver {
 public:
  using Lookup = std::function<std::optional<DeviceId>(const probes::JobSpec&)>;

  AsyncDeviceResolver(Lookup lookup, std::chrono::milliseconds max_wait);
  // Does not wait for a lookup that hangs: its thread is left to finish on
  // its own (it owns everything it touches).
  ~AsyncDeviceResolver();
  AsyncDeviceResolver(const AsyncDeviceResolver&) = delete;
  AsyncDeviceResolver& operator=(const AsyncDeviceResolver&) = delete;

  // Asks for a fresh lookup of the spec's target (unless one is already
  // under way), waits for it at most max_wait, and returns the latest answer.
  std::optional<DeviceId> Resolve(const probes::JobSpec& spec);

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the thread, which may outlive this
  std::chrono::milliseconds max_wait_;
};

}  // namespace iowatch::daemon
