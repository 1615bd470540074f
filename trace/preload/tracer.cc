#include "trace/preload/tracer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "common/utf8.h"
#include "trace/preload/real_calls.h"
#include "trace/preload/report_file.h"

namespace iowatch::trace {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string ReadLink(const char* link) {
  char buffer[FileTable::kMaxNameBytes];
  const ssize_t n = readlink(link, buffer, sizeof buffer);
  return n <= 0 ? std::string() : std::string(buffer, static_cast<size_t>(n));
}

bool Active(const FileTrace& t) {
  if (t.opens != 0) return true;
  return std::ranges::any_of(t.calls, [](const CallTotals& c) { return c.calls != 0; });
}

FileId IdOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

// Whether `opened` (fstat of the descriptor an open returned, taken after it
// returned) is the file the open's path names: another thread may have
// closed the number and put a pipe or another file's copy on it since. An
// O_TMPFILE open names the directory its file is made in.
bool IsWhatWasOpened(const struct stat& opened, int dir, const char* path, int flags) {
  struct stat named {};
  const int follow = (flags & O_NOFOLLOW) != 0 ? AT_SYMLINK_NOFOLLOW : 0;
  if (path == nullptr || fstatat(dir, path, &named, follow) != 0) return false;
  if ((flags & O_TMPFILE) == O_TMPFILE) {
    return S_ISDIR(named.st_mode) && named.st_dev == opened.st_dev;
  }
  return IdOf(named) == IdOf(opened);
}

// A call on no known position: classified as appends are.
Cursor UnknownPosition() {
  Cursor cursor;
  cursor.position_known = false;
  return cursor;
}

}  // namespace

bool Tracer::Start() {
  pid_.store(getpid(), std::memory_order_relaxed);
  timing_ = Env("IOWATCH_TRACE_TIMES") != "0";
  clock_.Start(timing_);
  json_path_ = Env("IOWATCH_TRACE_OUTPUT");
  text_path_ = Env("IOWATCH_TRACE_REPORT");
  if (!files_.Map()) return false;
  if (!json_path_.empty()) json_file_.Reserve(json_path_.c_str(), ReserveCeiling());
  if (!text_path_.empty()) {
    const int below = json_file_.descriptor();
    text_file_.Reserve(text_path_.c_str(), below >= 0 ? below : ReserveCeiling());
  }
  start_lines_ = !json_path_.empty() && Env("IOWATCH_TRACE_STARTS") == "1";
  if (start_lines_) {
    program_json_ = JsonString(ReadLink("/proc/self/exe"));
    void* buffer = mmap(nullptr, program_json_.size() + 96, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    start_line_ = buffer == MAP_FAILED ? nullptr : static_cast<char*>(buffer);
    WriteStartLine();
  }
  return true;
}

void Tracer::WriteStartLine() {
  if (start_line_ == nullptr) return;
  const size_t n = FormatStartLine(getpid(), getppid(), program_json_, start_line_);
  (void)json_file_.Append({start_line_, n});
}

void Tracer::Retire(int fd, Slot& slot) {
  slot.Lock();
  const SlotState state = slot.State();
  if (state.traced()) {
    if (struct stat st{}; fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      slot.trace.size = static_cast<uint64_t>(st.st_size);
    }
    MergeInto(files_.Trace(state.file()), slot.trace);
    slot.SetState(state.Next(state.file(), false));
  }
  slot.Unlock();
}

void Tracer::Untrace(int fd) {
  if (TracedSlot stale = fds_.FindTraced(fd)) Retire(-1, *stale.slot);
}

void Tracer::UntraceReplaced(int fd) {
  const TracedSlot stale = fds_.FindTraced(fd);
  if (!stale) return;
  if (struct stat st{}; fstat(fd, &st) == 0 && IdOf(st) == stale.slot->id) return;
  Retire(-1, *stale.slot);
}

void Tracer::Opened(int fd, int dir, const char* path, int flags, uint64_t ticks) {
  struct stat st {};
  const bool traceable = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) &&
                         IsWhatWasOpened(st, dir, path, flags);
  std::lock_guard lock(mutex_);
  if (finished_) return;
  if (!traceable) {
    // No file, or the number is another descriptor's since the open
    // returned: whoever put it there traced it (or it is stale).
    UntraceReplaced(fd);
    return;
  }
  Untrace(fd);  // a descriptor closed where we could not see it
  const std::string_view name = files_.NameOf(fd);
  if (name.empty()) return;  // closed by another thread already
  // Still the file opened once its name is read: a number closed and given
  // to a pipe in between would have named the pipe.
  if (struct stat again{}; fstat(fd, &again) != 0 || IdOf(again) != IdOf(st)) return;
  Slot* slot = fds_.Map(fd);
  if (slot == nullptr) return;
  const uint32_t file = files_.Find(name);
  slot->id = IdOf(st);
  slot->Lock();
  slot->cursor = Cursor{};
  slot->cursor.append = (flags & O_APPEND) != 0;
  slot->trace = FileTrace{};
  slot->trace.opens = 1;
  slot->trace.open_flags = static_cast<uint32_t>(flags);
  slot->trace.block_device = S_ISBLK(st.st_mode);
  slot->trace.size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  RecordCall(slot->trace, TraceCall::kOpen, false, ticks);
  slot->SetState(slot->State().Next(file, true));
  slot->Unlock();
}

template <class Record>
void Tracer::Stray(SlotState seen, Record&& record) {
  FileTrace stray;
  record(stray);
  for (CallTotals& call : stray.calls) call.raced = call.calls;  // the one call recorded
  std::lock_guard lock(mutex_);
  if (!finished_) MergeInto(files_.Trace(seen.file()), stray);
}

void Tracer::Transfer(TracedSlot traced, Direction direction, uint64_t offset, uint64_t requested,
                      int64_t result, uint64_t ticks) {
  Slot& slot = *traced.slot;
  slot.Lock();
  if (slot.State() == traced.seen) {
    RecordTransfer(slot.trace, slot.cursor, direction, offset, requested, result, ticks);
    slot.Unlock();
    return;
  }
  slot.Unlock();
  Stray(traced.seen, [&](FileTrace& trace) {
    Cursor cursor = UnknownPosition();
    RecordTransfer(trace, cursor, direction, offset, requested, result, ticks);
  });
}

void Tracer::Seeked(TracedSlot traced, int64_t result, uint64_t ticks) {
  Slot& slot = *traced.slot;
  slot.Lock();
  if (slot.State() == traced.seen) {
    RecordSeek(slot.trace, slot.cursor, result, ticks);
    slot.Unlock();
    return;
  }
  slot.Unlock();
  Stray(traced.seen, [&](FileTrace& trace) {
    Cursor cursor = UnknownPosition();
    RecordSeek(trace, cursor, result, ticks);
  });
}

void Tracer::Synced(TracedSlot traced, bool failed, uint64_t ticks) {
  Slot& slot = *traced.slot;
  slot.Lock();
  if (slot.State() == traced.seen) {
    RecordCall(slot.trace, TraceCall::kFsync, failed, ticks);
    slot.Unlock();
    return;
  }
  slot.Unlock();
  Stray(traced.seen,
        [&](FileTrace& trace) { RecordCall(trace, TraceCall::kFsync, failed, ticks); });
}

std::optional<uint32_t> Tracer::ClosingHeld(int fd) {
  const TracedSlot traced = fds_.FindTraced(fd);
  if (!traced) return std::nullopt;
  Retire(fd, *traced.slot);
  return traced.seen.file();
}

void Tracer::ClosedHeld(uint32_t file_id, bool failed, uint64_t ticks) {
  if (!finished_ && file_id < files_.size()) {
    RecordCall(files_.Trace(file_id), TraceCall::kClose, failed, ticks);
  }
}

void Tracer::Duplicated(int old_fd, int new_fd) {
  std::lock_guard lock(mutex_);
  DuplicatedHeld(old_fd, new_fd);
}

void Tracer::RetireHeld(int fd) {
  if (!finished_) Untrace(fd);
}

void Tracer::DuplicatedHeld(int old_fd, int new_fd) {
  if (finished_ || new_fd < 0 || new_fd == old_fd) return;
  // The copy is old_fd's file only while new_fd is that file: old_fd may
  // have been closed and opened on another file since the dup, or new_fd
  // closed and given to a pipe.
  const TracedSlot from = fds_.FindTraced(old_fd);
  struct stat st {};
  if (!from || fstat(new_fd, &st) != 0 || IdOf(st) != from.slot->id) {
    UntraceReplaced(new_fd);
    return;
  }
  Untrace(new_fd);  // dup2 onto a traced descriptor closed it
  Slot* to = fds_.Map(new_fd);
  if (to == nullptr) return;
  from.slot->Lock();
  const SlotState state = from.slot->State();
  const Cursor cursor = from.slot->cursor;
  const uint32_t flags = from.slot->trace.open_flags;
  const bool block_device = from.slot->trace.block_device;
  from.slot->Unlock();
  if (!state.traced()) return;
  to->id = IdOf(st);
  to->Lock();
  to->cursor = cursor;
  to->trace = FileTrace{};
  to->trace.open_flags = flags;
  to->trace.block_device = block_device;
  to->SetState(to->State().Next(state.file(), true));
  to->Unlock();
}

void Tracer::Created(int fd) {
  std::lock_guard lock(mutex_);
  if (!finished_) UntraceReplaced(fd);
}

void Tracer::ClosedRangeHeld(unsigned first, unsigned last) {
  fds_.ForEachSlot([&](int fd, Slot& slot) {
    const auto number = static_cast<unsigned>(fd);
    if (number >= first && number <= last) Retire(-1, slot);
  });
}

ProcessTrace Tracer::Report() {
  ProcessTrace report;
  report.pid = getpid();
  report.parent_pid = getppid();
  report.program = ReadLink("/proc/self/exe");
  report.seconds = clock_.SecondsSinceStart();
  report.clock = clock_.Name();
  const double ns_per_tick = clock_.NsPerTick();
  for (uint32_t id = 0; id < files_.size(); ++id) {
    FileTrace& trace = files_.Trace(id);
    if (!Active(trace)) continue;
    ScaleTimes(trace, ns_per_tick);
    report.files.push_back({std::string(files_.Name(id)), trace});
  }
  std::ranges::sort(report.files, {}, &TracedFile::path);
  return report;
}

void Tracer::Write(const ProcessTrace& report) const {
  if (!json_path_.empty()) (void)json_file_.Append(TraceJsonLine(report));
  if (!text_path_.empty()) (void)text_file_.Append(FormatTraceText(report));
}

void Tracer::Finish() {
  // A vfork child that called exit() runs this in its parent's memory: the
  // parent's report is the parent's to write.
  if (!InOwnProcess()) return;
  ProcessTrace report;
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    fds_.ForEachSlot([this](int fd, Slot& slot) {
      if (slot.State().traced()) Retire(fd, slot);
    });
    report = Report();
  }
  Write(report);
}

void Tracer::BeforeFork() { mutex_.lock(); }

void Tracer::AfterForkParent() { mutex_.unlock(); }

void Tracer::AfterForkChild() {
  // One thread now: a slot lock held by another thread of the parent would
  // never be released, and the counts so far are the parent's.
  pid_.store(getpid(), std::memory_order_relaxed);
  opening_.store(0);  // other threads' opens under way: not in this process
  // Only what is written is copied (the pages are the parent's until then):
  // the traced slots, and the locks that are held.
  fds_.ForEachSlot([](int /*fd*/, Slot& slot) {
    if (slot.locked.load(std::memory_order_relaxed)) {
      slot.locked.store(false, std::memory_order_relaxed);
    }
    if (!slot.State().traced()) return;
    const uint32_t flags = slot.trace.open_flags;
    const bool block_device = slot.trace.block_device;
    slot.trace = FileTrace{};
    slot.trace.open_flags = flags;
    slot.trace.block_device = block_device;
  });
  files_.ResetTraces();
  clock_.Start(timing_);
  if (start_lines_) WriteStartLine();
  mutex_.unlock();
}

}  // namespace iowatch::trace
