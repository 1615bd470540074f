// ThreadCpuMeter: the CPU time (user, system) and context switches
// (voluntary, involuntary) the calling thread used since Start(), from
// getrusage(RUSAGE_THREAD); what a probe run reports as its CPU cost, as
// fio's usr_cpu, sys_cpu and ctx do.
// Thread-safety: it measures the calling thread, so Start() and SinceStart()
// belong on the same thread.
#pragma once

#include "probes/run/probe_result.h"

namespace iowatch::probes {

class ThreadCpuMeter {
 public:
  void Start();
  CpuUsage SinceStart() const;

 private:
  CpuUsage start_;
};

}  // namespace iowatch::probes
