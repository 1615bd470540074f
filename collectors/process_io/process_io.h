// Per-process storage I/O from /proc/PID/io (proc(5)): read_bytes and
// write_bytes are what the process caused to be fetched from or sent to the
// storage layer, cancelled_write_bytes the dirty page-cache bytes it
// truncated before they were written. With /proc/PID/cgroup they attribute
// I/O to a cgroup where the cgroup files cannot (cgroup v1 without a
// throttle rule). Reading another user's process's io needs ptrace-read
// access (PTRACE_MODE_READ_FSCREDS): those are counted as unreadable.
// A parent that reaps a child adds the child's counts to its own (the
// kernel's wait_task_zombie): ProcessSource takes back what it counted of
// the child. A process that exits takes its last interval's I/O with it
// unless its parent is seen.
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct ProcessIo {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t cancelled_write_bytes = 0;
  bool operator==(const ProcessIo&) const = default;
};

// Fails with path:line when read_bytes or write_bytes is missing or not a number.
Result<ProcessIo> ParseProcessIo(std::string_view text, std::string_view path);

// What /proc/PID/stat (proc(5)) says of a process's identity and place,
// its fields counted after the ')' that ends the command name, which may
// itself hold spaces and parentheses.
struct ProcessStat {
  uint32_t ppid = 0;         // field 4: the parent, which reaps it and takes its io counts
  uint64_t start_ticks = 0;  // field 22: with the pid, one process for its whole life
};
// nullopt when the line is not that.
std::optional<ProcessStat> ParseProcessStat(std::string_view stat_text);

struct ProcessIoReading {
  struct Process {
    std::string cgroup;  // UnitCgroupPathIn of its /proc/PID/cgroup: systemd's tree
    ProcessIo io;
    std::optional<ProcessStat> stat;  // nullopt when stat could not be read
  };
  std::map<uint32_t, Process> by_pid;
  uint64_t unreadable = 0;  // processes whose io could not be read (EACCES), gone ones excluded
};

// Every process under <procfs>: its cgroup in systemd's tree and its io.
ProcessIoReading ReadProcessIo(const FileTree& procfs);

}  // namespace iowatch::collectors
