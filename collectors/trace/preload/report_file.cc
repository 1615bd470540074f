#include "collectors/trace/preload/report_file.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "collectors/trace/preload/async_safe.h"
#include "collectors/trace/preload/real_calls.h"

namespace iowatch::collectors::trace {
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

}  // namespace

bool AppendToFile(const char* path, std::string_view text) {
  const int fd = CallReal(Real().open, path,
                          O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
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
  (void)CallReal(Real().close, fd);
  return written;
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

}  // namespace iowatch::collectors::trace
