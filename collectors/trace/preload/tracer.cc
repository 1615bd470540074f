#include "collectors/trace/preload/tracer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "collectors/trace/preload/real_calls.h"

namespace iowatch::collectors::trace {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string ReadLink(const char* link) {
  char buffer[4096];
  const ssize_t n = readlink(link, buffer, sizeof buffer);
  return n <= 0 ? std::string() : std::string(buffer, static_cast<size_t>(n));
}

std::string PathOf(int fd) {
  char link[64];
  (void)std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  std::string path = ReadLink(link);
  if (path.empty()) {
    (void)std::snprintf(link, sizeof link, "(descriptor %d)", fd);  // no /proc
    path = link;
  }
  return path;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = Real().write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;  // nowhere to report the report's own failure
    done += static_cast<size_t>(n);
  }
}

void AppendToFile(const std::string& path, const std::string& text) {
  const int fd = Real().open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    WriteAll(STDERR_FILENO, "iowatch trace: cannot open " + path + ": the report follows\n" + text);
    return;
  }
  WriteAll(fd, text);
  (void)Real().close(fd);
}

bool Active(const FileTrace& t) {
  if (t.opens != 0) return true;
  return std::ranges::any_of(t.calls, [](const CallTotals& c) { return c.calls != 0; });
}

}  // namespace

void Tracer::Start() {
  timing_ = Env("IOWATCH_TRACE_TIMES") != "0";
  clock_.Start(timing_);
  json_path_ = Env("IOWATCH_TRACE_OUTPUT");
  text_path_ = Env("IOWATCH_TRACE_REPORT");
}

uint32_t Tracer::FileId(const std::string& path) {
  if (const auto it = file_ids_.find(path); it != file_ids_.end()) return it->second;
  const bool full = files_.size() >= kMaxTracedFiles;
  const std::string& name = full ? std::string(kOtherFiles) : path;
  if (full) {
    if (const auto it = file_ids_.find(name); it != file_ids_.end()) return it->second;
  }
  files_.push_back({name, {}});
  const auto id = static_cast<uint32_t>(files_.size() - 1);
  file_ids_.emplace(name, id);
  return id;
}

void Tracer::Retire(int fd, Slot& slot) {
  slot.Lock();
  if (slot.traced.load(std::memory_order_relaxed)) {
    if (struct stat st{}; fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      slot.trace.size = static_cast<uint64_t>(st.st_size);
    }
    MergeInto(files_[slot.path_id].trace, slot.trace);
    slot.traced.store(false, std::memory_order_release);
  }
  slot.Unlock();
}

void Tracer::Untrace(int fd) {
  if (Slot* stale = fds_.FindTraced(fd); stale != nullptr) Retire(-1, *stale);
}

void Tracer::Opened(int fd, int flags, uint64_t ticks) {
  struct stat st {};
  const bool traceable = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
  const std::string path = traceable ? PathOf(fd) : std::string();
  std::lock_guard lock(mutex_);
  if (finished_) return;
  Untrace(fd);  // a descriptor closed where we could not see it (fclose, close_range)
  if (!traceable) return;
  Slot* slot = fds_.Map(fd);
  if (slot == nullptr) return;
  slot->Lock();
  slot->path_id = FileId(path);
  slot->cursor = Cursor{};
  slot->cursor.append = (flags & O_APPEND) != 0;
  slot->trace = FileTrace{};
  slot->trace.opens = 1;
  slot->trace.open_flags = static_cast<uint32_t>(flags);
  slot->trace.block_device = S_ISBLK(st.st_mode);
  slot->trace.size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  RecordCall(slot->trace, TraceCall::kOpen, false, ticks);
  slot->traced.store(true, std::memory_order_release);
  slot->Unlock();
}

void Tracer::Transfer(Slot& slot, Direction direction, uint64_t offset, uint64_t requested,
                      int64_t result, uint64_t ticks) {
  slot.Lock();
  RecordTransfer(slot.trace, slot.cursor, direction, offset, requested, result, ticks);
  slot.Unlock();
}

void Tracer::Seeked(Slot& slot, int64_t result, uint64_t ticks) {
  slot.Lock();
  RecordSeek(slot.trace, slot.cursor, result, ticks);
  slot.Unlock();
}

void Tracer::Synced(Slot& slot, bool failed, uint64_t ticks) {
  slot.Lock();
  RecordCall(slot.trace, TraceCall::kFsync, failed, ticks);
  slot.Unlock();
}

uint32_t Tracer::Closing(int fd, Slot& slot) {
  std::lock_guard lock(mutex_);
  const uint32_t file_id = slot.path_id;
  Retire(fd, slot);
  return file_id;
}

void Tracer::Closed(uint32_t file_id, bool failed, uint64_t ticks) {
  std::lock_guard lock(mutex_);
  if (!finished_ && file_id < files_.size()) {
    RecordCall(files_[file_id].trace, TraceCall::kClose, failed, ticks);
  }
}

void Tracer::Duplicated(int old_fd, int new_fd) {
  std::lock_guard lock(mutex_);
  if (finished_ || new_fd < 0 || new_fd == old_fd) return;
  Untrace(new_fd);  // dup2 onto a traced descriptor closed it
  Slot* from = fds_.FindTraced(old_fd);
  if (from == nullptr) return;
  Slot* to = fds_.Map(new_fd);
  if (to == nullptr) return;
  from->Lock();
  const uint32_t path_id = from->path_id;
  Cursor cursor = from->cursor;
  const uint32_t flags = from->trace.open_flags;
  const bool block_device = from->trace.block_device;
  from->Unlock();
  to->Lock();
  to->path_id = path_id;
  to->cursor = cursor;
  to->trace = FileTrace{};
  to->trace.open_flags = flags;
  to->trace.block_device = block_device;
  to->traced.store(true, std::memory_order_release);
  to->Unlock();
}

void Tracer::ClosedRange(unsigned first, unsigned last) {
  std::lock_guard lock(mutex_);
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
  for (FileEntry& entry : files_) {
    if (!Active(entry.trace)) continue;
    ScaleTimes(entry.trace, ns_per_tick);
    report.files.push_back({entry.path, entry.trace});
  }
  std::ranges::sort(report.files, {}, &TracedFile::path);
  return report;
}

void Tracer::Write(const ProcessTrace& report) const {
  if (!json_path_.empty()) AppendToFile(json_path_, TraceJsonLine(report));
  if (!text_path_.empty()) AppendToFile(text_path_, FormatTraceText(report));
  if (json_path_.empty() && text_path_.empty()) WriteAll(STDERR_FILENO, FormatTraceText(report));
}

void Tracer::Finish() {
  ProcessTrace report;
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    fds_.ForEachSlot([this](int fd, Slot& slot) {
      if (slot.traced.load(std::memory_order_acquire)) Retire(fd, slot);
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
  fds_.ForEachSlot([](int /*fd*/, Slot& slot) {
    slot.locked.store(false, std::memory_order_relaxed);
    const bool traced = slot.traced.load(std::memory_order_relaxed);
    const uint32_t flags = slot.trace.open_flags;
    const bool block_device = slot.trace.block_device;
    slot.trace = FileTrace{};
    slot.trace.open_flags = flags;
    slot.trace.block_device = block_device;
    slot.traced.store(traced, std::memory_order_relaxed);
  });
  for (FileEntry& entry : files_) entry.trace = FileTrace{};
  clock_.Start(timing_);
  mutex_.unlock();
}

}  // namespace iowatch::collectors::trace
