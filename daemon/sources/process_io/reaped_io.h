// ReapedIo: what a parent's /proc/PID/io owes to its children. The kernel
// adds a child's counts to its parent's when the parent reaps it
// (wait_task_zombie), so a process that spawns others (a shell, make, a
// supervisor) shows their I/O again on top of what was counted while they
// lived. This takes back, from each live process's growth, the counts of
// its children gone since the last reading as they were last seen: a gone
// child's counts go to its first live ancestor (a gone parent's own parent
// took them in turn). What a child did after the last reading stays in its
// parent's growth, where it would otherwise be lost. A debt the growth does
// not yet cover (the child reaped after its parent was read) waits up to
// kMaxReadings readings, then is forgotten: a debt to the wrong process
// (reparented after the last reading) must not hide its I/O for long.
// Thread-safety: not thread-safe; the process source's worker only.
#pragma once

#include <cstdint>
#include <map>

#include "collectors/process_io/process_io.h"

namespace iowatch::daemon {

class ReapedIo {
 public:
  using Processes = std::map<uint32_t, collectors::ProcessIoReading::Process>;
  static constexpr uint64_t kMaxReadings = 3;

  // Whether `now` is the process `before` was (the same pid): the same start
  // time where both are known; else the same cgroup and counters that did
  // not go back.
  static bool SameProcess(const collectors::ProcessIoReading::Process& before,
                          const collectors::ProcessIoReading::Process& now);

  // Notes the debts of a new reading against the previous one.
  void Update(const Processes& previous, const Processes& current);

  // `raw`, pid's growth this reading, less what it owes (paid off).
  collectors::ProcessIo Pay(uint32_t pid, const collectors::ProcessIo& raw);

 private:
  struct Debt {
    uint64_t start_ticks = 0;  // the debtor's
    collectors::ProcessIo io;
    uint64_t readings = 0;
  };
  std::map<uint32_t, Debt> debts_;
};

}  // namespace iowatch::daemon
