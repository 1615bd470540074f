#include "trace/preload/report_file.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "trace/preload/async_safe.h"
#include "trace/preload/real_calls.h"

namespace iowatch::trace {
namespace {

int64_t MonotonicMs() {
  timespec now{};
  (void)clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

// Writes `text` whole, waiting for a full pipe until `deadline_ms`.
bool WriteAll(int fd, std::string_view text, int64_t deadline_ms, bool& broken_pipe) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = CallReal(Real().write, fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) broken_pipe = true;
    const int64_t left = deadline_ms - MonotonicMs();
    if (n == 0 || errno != EAGAIN || left <= 0) return false;
    pollfd wait{fd, POLLOUT, 0};
    if (poll(&wait, 1, static_cast<int>(left)) <= 0) return false;
  }
  return true;
}

constexpr int kAppendFlags = O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

// Writes `text` to `fd` with SIGPIPE held off (report_file.h).
bool AppendToDescriptor(int fd, std::string_view text) {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  bool broken_pipe = false;
  const bool written = WriteAll(fd, text, MonotonicMs() + kDrainMilliseconds, broken_pipe);
  if (broken_pipe && !already_pending) {
    const timespec now{};
    (void)sigtimedwait(&pipe_signal, nullptr, &now);  // ours: taken back
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return written;
}

int OpenForAppend(const char* path) { return CallReal(Real().open, path, kAppendFlags, 0644); }

bool AppendAndClose(int fd, std::string_view text) {
  const bool written = AppendToDescriptor(fd, text);
  (void)CallReal(Real().close, fd);
  return written;
}

}  // namespace

bool AppendToFile(const char* path, std::string_view text) {
  const int fd = OpenForAppend(path);
  return fd >= 0 && AppendAndClose(fd, text);
}

int ReserveCeiling() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur > 1024) return 1024;
  return static_cast<int>(limit.rlim_cur);
}

void ReportFile::Reserve(const char* path, int below) {
  path_ = path;
  // Not opened before the end unless a regular file: opening a FIFO or a
  // terminal is seen by whoever is at its other end.
  if (struct stat st{}; stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return;
  const int fd = OpenForAppend(path);
  if (fd < 0) return;
  struct stat st {};
  int high = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // F_DUPFD gives the lowest free number from its argument up: tried from
    // the top down, the first that works is the highest free one.
    for (int number = below - 1; number > fd && high < 0; --number) {
      high = CallReal(Real().fcntl, fd, F_DUPFD_CLOEXEC, number);
      if (high >= below) {
        (void)CallReal(Real().close, high);
        high = -1;
      }
    }
  }
  (void)CallReal(Real().close, fd);
  if (high < 0) return;  // only low numbers free: the program's to have
  fd_ = high;
  device_ = st.st_dev;
  inode_ = st.st_ino;
}

bool ReportFile::StillOurs() const {
  struct stat st {};
  if (fd_ < 0 || fstat(fd_, &st) != 0) return false;
  const int flags = CallReal(Real().fcntl, fd_, F_GETFL, 0);
  return st.st_dev == device_ && st.st_ino == inode_ && flags >= 0 && (flags & O_APPEND) != 0 &&
         (flags & O_ACCMODE) != O_RDONLY;
}

bool ReportFile::Append(std::string_view text) const {
  if (path_ == nullptr) return false;
  const int fd = OpenForAppend(path_);
  if (fd >= 0) return AppendAndClose(fd, text);
  return StillOurs() && AppendToDescriptor(fd_, text);
}

size_t FormatStartLine(int64_t pid, int64_t parent_pid, std::string_view program_json, char* out) {
  size_t n = Copy("{\"iowatch_trace_start\":1,\"pid\":", out);
  n += FormatDecimal(static_cast<uint64_t>(pid), out + n);
  n += Copy(",\"parent_pid\":", out + n);
  n += FormatDecimal(static_cast<uint64_t>(parent_pid), out + n);
  n += Copy(",\"program\":", out + n);
  n += Copy(program_json, out + n);
  n += Copy("}\n", out + n);
  return n;
}

}  // namespace iowatch::trace
