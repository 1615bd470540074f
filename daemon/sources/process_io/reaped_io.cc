#include "daemon/sources/process_io/reaped_io.h"

#include <algorithm>
#include <iterator>

namespace iowatch::daemon {
namespace {

using collectors::ProcessIo;
using Process = collectors::ProcessIoReading::Process;

// A chain of gone parents is never longer than this (a cycle in a reading
// taken while pids were reused would be endless).
constexpr int kMaxHops = 64;

void Add(ProcessIo& to, const ProcessIo& from) {
  to.read_bytes += from.read_bytes;
  to.write_bytes += from.write_bytes;
  to.cancelled_write_bytes += from.cancelled_write_bytes;
}

// Takes what it can of `debt` from `value`.
uint64_t PayOff(uint64_t value, uint64_t& debt) {
  const uint64_t paid = std::min(value, debt);
  debt -= paid;
  return value - paid;
}

}  // namespace

bool ReapedIo::SameProcess(const Process& before, const Process& now) {
  if (before.stat && now.stat) return before.stat->start_ticks == now.stat->start_ticks;
  return before.cgroup == now.cgroup && now.io.read_bytes >= before.io.read_bytes &&
         now.io.write_bytes >= before.io.write_bytes;
}

void ReapedIo::Update(const Processes& previous, const Processes& current) {
  const auto alive = [&](uint32_t pid) {
    const auto before = previous.find(pid);
    const auto now = current.find(pid);
    return before != previous.end() && now != current.end() &&
           SameProcess(before->second, now->second);
  };
  // Debts of processes gone or replaced go with them; the rest age.
  for (auto it = debts_.begin(); it != debts_.end();) {
    const auto now = current.find(it->first);
    const bool same = now != current.end() && now->second.stat &&
                      now->second.stat->start_ticks == it->second.start_ticks;
    it = same && ++it->second.readings <= kMaxReadings ? std::next(it) : debts_.erase(it);
  }
  for (const auto& [pid, gone] : previous) {
    if (alive(pid)) continue;
    uint32_t parent = gone.stat ? gone.stat->ppid : 0;
    for (int hop = 0; parent != 0 && hop < kMaxHops; ++hop) {
      if (alive(parent)) {
        Debt& debt = debts_[parent];
        debt.start_ticks = current.at(parent).stat ? current.at(parent).stat->start_ticks : 0;
        Add(debt.io, gone.io);
        break;
      }
      const auto up = previous.find(parent);
      if (up == previous.end() || !up->second.stat) break;  // its reaper is not known
      parent = up->second.stat->ppid;
    }
  }
}

ProcessIo ReapedIo::Pay(uint32_t pid, const ProcessIo& raw) {
  const auto it = debts_.find(pid);
  if (it == debts_.end()) return raw;
  ProcessIo& debt = it->second.io;
  const ProcessIo paid{PayOff(raw.read_bytes, debt.read_bytes),
                       PayOff(raw.write_bytes, debt.write_bytes),
                       PayOff(raw.cancelled_write_bytes, debt.cancelled_write_bytes)};
  if (debt == ProcessIo{}) debts_.erase(it);
  return paid;
}

}  // namespace iowatch::daemon
