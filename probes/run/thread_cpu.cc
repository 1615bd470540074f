#include "probes/run/thread_cpu.h"

#include <sys/resource.h>

#include <cstdint>

namespace iowatch::probes {
namespace {

double Seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

CpuUsage ThreadCpu() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return CpuUsage{
      .user_seconds = Seconds(usage.ru_utime),
      .system_seconds = Seconds(usage.ru_stime),
      .voluntary_switches = static_cast<uint64_t>(usage.ru_nvcsw),
      .involuntary_switches = static_cast<uint64_t>(usage.ru_nivcsw),
  };
}

}  // namespace

void ThreadCpuMeter::Start() { start_ = ThreadCpu(); }

CpuUsage ThreadCpuMeter::SinceStart() const {
  const CpuUsage now = ThreadCpu();
  return CpuUsage{
      .user_seconds = now.user_seconds - start_.user_seconds,
      .system_seconds = now.system_seconds - start_.system_seconds,
      .voluntary_switches = now.voluntary_switches - start_.voluntary_switches,
      .involuntary_switches = now.involuntary_switches - start_.involuntary_switches,
  };
}

}  // namespace iowatch::probes
