// The trace library's state in a traced process: the descriptor table, the
// table of files (path → FileTrace of its closed opens), the clock, and where
// the report goes. The interposed functions (interpose.cc) tell it what
// happened; at exit it writes the process's report.
//   Opened     a descriptor of a regular file or block device is traced from
//              now on (others are not: sockets, pipes, terminals)
//   Transfer, Seeked, Synced   update the descriptor's slot under its lock
//   Closing    the slot's trace goes into its file's entry
//   Duplicated dup/dup2/dup3: the new descriptor is traced as the same file,
//              with a cursor of its own (a shared offset is not followed)
//   Finish     at exit: every open descriptor's trace into its file's entry,
//              then the report (IOWATCH_TRACE_OUTPUT: a JSON line appended;
//              IOWATCH_TRACE_REPORT: the text appended; neither: the text on
//              standard error; IOWATCH_TRACE_TIMES=0: calls counted, not timed)
//   AfterFork  in a child: the counts start from zero, so that each process
//              reports what it did itself
// Thread-safety: any thread; the file table under a mutex, slots under
// their locks. The process has one Tracer, made by the library's constructor
// and never destroyed (interpose.cc): the interposed functions have no other
// context to reach it from, and other libraries' destructors may still do
// I/O after ours ran.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/trace/preload/fd_table.h"
#include "collectors/trace/preload/tick_clock.h"
#include "collectors/trace/process_trace.h"

namespace iowatch::collectors::trace {

class Tracer {
 public:
  void Start();
  uint64_t Ticks() const { return clock_.Ticks(); }

  Slot* Traced(int fd) const { return fds_.FindTraced(fd); }
  void Opened(int fd, int flags, uint64_t ticks);
  void Transfer(Slot& slot, Direction direction, uint64_t offset, uint64_t requested,
                int64_t result, uint64_t ticks);
  void Seeked(Slot& slot, int64_t result, uint64_t ticks);
  void Synced(Slot& slot, bool failed, uint64_t ticks);
  // Before the descriptor is closed: its size is read and its trace goes
  // into its file's entry, so that a descriptor the kernel hands out again
  // at once (another thread's open) never meets this one's slot. Returns the
  // file's entry, for Closed to count the close in.
  uint32_t Closing(int fd, Slot& slot);
  void Closed(uint32_t file_id, bool failed, uint64_t ticks);
  void Duplicated(int old_fd, int new_fd);
  void ClosedRange(unsigned first, unsigned last);  // close_range(2)
  void Finish();
  void BeforeFork();
  void AfterForkParent();
  void AfterForkChild();

 private:
  struct FileEntry {
    std::string path;
    FileTrace trace;
  };

  uint32_t FileId(const std::string& path);  // under mutex_
  void Untrace(int fd);                      // under mutex_: a stale slot retired
  void Retire(int fd, Slot& slot);           // under mutex_
  ProcessTrace Report();                     // under mutex_
  void Write(const ProcessTrace& report) const;

  TickClock clock_;
  FdTable fds_;
  std::mutex mutex_;
  std::vector<FileEntry> files_;  // kMaxTracedFiles at most, then kOtherFiles
  std::unordered_map<std::string, uint32_t> file_ids_;
  std::string json_path_;
  std::string text_path_;
  bool finished_ = false;
  bool timing_ = true;  // IOWATCH_TRACE_TIMES=0: calls not timed
};

}  // namespace iowatch::collectors::trace
