// The trace library's state in a traced process: the descriptor table, the
// table of files (path → FileTrace of its closed opens), the clock, and where
// the report goes. The interposed functions (interpose*.cc) tell it what
// happened; at exit it writes the process's report.
//   Opened     a descriptor of a regular file or block device is traced from
//              now on (others are not: sockets, pipes, terminals), when it
//              still is the file the open's path names: a number another
//              thread closed and gave to a pipe, or dup2()ed over, since the
//              open returned is not, nor is one closed before its name was
//              read. While an open is under way (BeginOpen..EndOpen), Created
//              and Duplicated take the mutex even for numbers not traced, so
//              that a pipe put on the number while Opened checks it waits
//              for the slot to be set and retires it
//   Transfer, Seeked, Synced   update the descriptor's slot under its lock,
//              or, when the slot was retired while the call ran, the file the
//              call was made on, the call counted as raced
//   ClosingHeld  the slot's trace goes into its file's entry, under Hold()
//              across the real close (and dup2's, close_range's)
//   Duplicated dup/dup2/dup3/fcntl(F_DUPFD): the new descriptor is traced as
//              the same file, with a cursor of its own (a shared offset is not
//              followed), when it is that file (fstat's device and inode)
//   Created    a descriptor that is no traced file (pipe, socket, eventfd):
//              whatever its number was traced as was closed where the tracer
//              could not see it, unless the number is that file again (another
//              thread's open since)
//   Finish     at exit: every open descriptor's trace into its file's entry,
//              then the report (IOWATCH_TRACE_OUTPUT: a JSON line appended;
//              IOWATCH_TRACE_REPORT: the text appended; neither: nothing, see
//              report_file.h; IOWATCH_TRACE_TIMES=0: calls counted, not timed)
//   AfterFork  in a child: the counts start from zero, so that each process
//              reports what it did itself
// What a signal handler can reach (Opened, ClosingHeld, Duplicated, Created, the
// updates, AfterForkChild) allocates nothing: the tables are mapped memory
// (file_table.h, fd_table.h). Finish allocates: it runs at exit.
// Changes to the tables are made only by the process they belong to: a vfork
// child (or a clone sharing its parent's memory) runs with the parent's
// tables but its own descriptors, and InOwnProcess() tells the interposed
// functions to pass its opens, closes and dups through, lest the child's
// descriptors be written into the parent's tables.
// Thread-safety: any thread; the file table under a mutex, slots under their
// locks. The process has one Tracer, made by the library's constructor and
// never destroyed (interpose.cc): the interposed functions have no other
// context to reach it from, and other libraries' destructors may still do
// I/O after ours ran.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "trace/preload/fd_table.h"
#include "trace/preload/file_table.h"
#include "trace/preload/report_file.h"
#include "trace/preload/tick_clock.h"
#include "trace/process_trace.h"

namespace iowatch::trace {

class Tracer {
 public:
  // False when the tables cannot be had: the library then passes every call
  // through.
  bool Start();
  uint64_t Ticks() const { return clock_.Ticks(); }

  // A system call (getpid): made on opens, closes and dups, never on reads
  // and writes, whose cost is the library's budget.
  bool InOwnProcess() const { return getpid() == pid_.load(std::memory_order_relaxed); }

  TracedSlot Traced(int fd) const { return fds_.FindTraced(fd); }
  void BeginOpen() { opening_.fetch_add(1); }
  void EndOpen() { opening_.fetch_sub(1); }
  // (> 0: a child forked from a handler during an open counts from zero and
  // may end that open below it.)
  bool Opening() const { return opening_.load() > 0; }
  // Whether a descriptor just made on `fd` (a dup's copy, a pipe's end) may
  // meet a slot: one traced there, or one an open under way may trace there.
  // The open count is read first: an open that registers `fd`'s slot ends
  // after it, so a count read as 0 makes that slot's state visible to the
  // lookup that follows. Read the other way round, the slot could be seen
  // untraced just before the open registered it and the count 0 just after
  // it ended, and the pipe's traffic would be counted as the file's.
  bool MayMeetSlot(int fd) const { return Opening() || Traced(fd); }
  // `fd` was returned by an open of `path` (relative to `dir`).
  void Opened(int fd, int dir, const char* path, int flags, uint64_t ticks);
  void Transfer(TracedSlot slot, Direction direction, uint64_t offset, uint64_t requested,
                int64_t result, uint64_t ticks);
  void Seeked(TracedSlot slot, int64_t result, uint64_t ticks);
  void Synced(TracedSlot slot, bool failed, uint64_t ticks);
  // The mutex, held by a caller across a real call that closes or replaces
  // a descriptor that may meet a slot (close, dup2 onto it, close_range):
  // the slot is retired before the kernel's change and no open registers
  // the number in between, so a traced number always is its file (else
  // another thread's call on it, between the change and the retirement,
  // would pass a pipe's traffic to the file). The *Held calls need it.
  std::unique_lock<std::mutex> Hold() { return std::unique_lock(mutex_); }
  // Before the descriptor is closed: its size is read and its trace goes
  // into its file's entry. Returns the file's entry, for ClosedHeld to count
  // the close in; none when `fd` is not traced.
  std::optional<uint32_t> ClosingHeld(int fd);
  void ClosedHeld(uint32_t file_id, bool failed, uint64_t ticks);
  // dup, fcntl(F_DUPFD): a new number, which no slot is traced on.
  void Duplicated(int old_fd, int new_fd);
  // dup2, dup3: before the call, RetireHeld(new_fd) (the copy closes it).
  void DuplicatedHeld(int old_fd, int new_fd);
  void RetireHeld(int fd);
  void Created(int fd);
  void ClosedRangeHeld(unsigned first, unsigned last);  // close_range(2), closefrom(3)
  void Finish();
  void BeforeFork();
  void AfterForkParent();
  void AfterForkChild();

 private:
  void Retire(int fd, Slot& slot);  // under mutex_
  void Untrace(int fd);             // under mutex_: a stale slot retired
  void UntraceReplaced(int fd);     // under mutex_: unless `fd` still is its slot's file
  // A call on a slot retired while it ran: into the file it was made on,
  // counted as raced there.
  template <class Record>
  void Stray(SlotState seen, Record&& record);
  ProcessTrace Report();  // under mutex_
  void Write(const ProcessTrace& report) const;
  void WriteStartLine();  // IOWATCH_TRACE_STARTS=1: {"iowatch_trace_start": ...}

  TickClock clock_;
  FdTable fds_;
  FileTable files_;
  std::mutex mutex_;
  std::atomic<pid_t> pid_{0};
  std::atomic<int> opening_{0};  // opens between BeginOpen and EndOpen
  std::string json_path_;
  std::string text_path_;
  ReportFile json_file_;  // json_path_'s, kept open for a program that ends at EMFILE
  ReportFile text_file_;
  std::string program_json_;    // the program's name as a JSON string, for start lines
  char* start_line_ = nullptr;  // mapped: FormatStartLine's buffer
  bool start_lines_ = false;
  bool finished_ = false;
  bool timing_ = true;  // IOWATCH_TRACE_TIMES=0: calls not timed
};

}  // namespace iowatch::trace
