// libiowatch-trace.so's entry points: the C library's file calls, interposed
// through LD_PRELOAD, each calling the real function (real_calls.h) and
// telling the process's Tracer what happened. open/openat/creat (and their
// 64-bit and _FORTIFY_SOURCE variants), read/write, pread/pwrite (and 64),
// readv/writev, lseek (and 64), fsync/fdatasync, close/close_range,
// dup/dup2/dup3. errno is what the real call left.
// Not seen: what the C library does inside itself (stdio's reads, fclose's
// close), mmap'd access, preadv/pwritev, io_uring and libaio; a process that
// ends in _exit() or a signal or execs writes no report.
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "collectors/trace/preload/real_calls.h"
#include "collectors/trace/preload/tracer.h"

namespace iowatch::collectors::trace {
namespace {

Tracer* g_tracer = nullptr;  // made by the constructor, never destroyed (tracer.h)

// Set while the tracer updates its tables: a signal handler that does I/O in
// the middle of that must not wait for a lock its own thread holds.
__attribute__((tls_model("initial-exec"))) thread_local bool t_busy = false;

class Busy {
 public:
  Busy() : errno_(errno) { t_busy = true; }
  ~Busy() {
    t_busy = false;
    errno = errno_;
  }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  int errno_;
};

Tracer* Active() { return t_busy ? nullptr : g_tracer; }

bool TakesMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

template <class Call>
int TracedOpen(int flags, Call&& call) {
  Tracer* tracer = Active();
  if (tracer == nullptr) return call();
  const uint64_t start = tracer->Ticks();
  const int fd = call();
  const uint64_t ticks = tracer->Ticks() - start;
  if (fd >= 0) {
    Busy busy;
    tracer->Opened(fd, flags, ticks);
  }
  return fd;
}

template <class Call>
auto TracedTransfer(int fd, Direction direction, uint64_t offset, uint64_t requested, Call&& call) {
  Tracer* tracer = Active();
  Slot* slot = tracer == nullptr ? nullptr : tracer->Traced(fd);
  if (slot == nullptr) return call();
  const uint64_t start = tracer->Ticks();
  const auto result = call();
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Transfer(*slot, direction, offset, requested, static_cast<int64_t>(result), ticks);
  return result;
}

off_t TracedSeek(int fd, off_t offset, int whence, off_t (*real)(int, off_t, int)) {
  Tracer* tracer = Active();
  Slot* slot = tracer == nullptr ? nullptr : tracer->Traced(fd);
  if (slot == nullptr) return real(fd, offset, whence);
  const uint64_t start = tracer->Ticks();
  const off_t result = real(fd, offset, whence);
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Seeked(*slot, result, ticks);
  return result;
}

int TracedSync(int fd, int (*real)(int)) {
  Tracer* tracer = Active();
  Slot* slot = tracer == nullptr ? nullptr : tracer->Traced(fd);
  if (slot == nullptr) return real(fd);
  const uint64_t start = tracer->Ticks();
  const int result = real(fd);
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Synced(*slot, result < 0, ticks);
  return result;
}

template <class Call>
int TracedDup(int old_fd, Call&& call) {
  const int new_fd = call();
  Tracer* tracer = Active();
  if (tracer != nullptr && new_fd >= 0) {
    Busy busy;
    tracer->Duplicated(old_fd, new_fd);
  }
  return new_fd;
}

uint64_t IovecBytes(const iovec* iov, int count) {
  uint64_t bytes = 0;
  for (int i = 0; i < count && iov != nullptr; ++i) bytes += iov[i].iov_len;
  return bytes;
}

uint64_t At(off_t offset) { return offset < 0 ? kAtCursor : static_cast<uint64_t>(offset); }

__attribute__((constructor)) void StartTracing() {
  (void)Real();
  auto* tracer = new Tracer;  // never deleted: see g_tracer
  tracer->Start();
  pthread_atfork([] { g_tracer->BeforeFork(); }, [] { g_tracer->AfterForkParent(); },
                 [] { g_tracer->AfterForkChild(); });
  g_tracer = tracer;
}

__attribute__((destructor)) void FinishTracing() {
  if (g_tracer == nullptr) return;
  const Busy busy;
  g_tracer->Finish();
}

}  // namespace
}  // namespace iowatch::collectors::trace

using iowatch::collectors::trace::At;
using iowatch::collectors::trace::Direction;
using iowatch::collectors::trace::IovecBytes;
using iowatch::collectors::trace::kAtCursor;
using iowatch::collectors::trace::Real;
using iowatch::collectors::trace::TakesMode;
using iowatch::collectors::trace::TracedDup;
using iowatch::collectors::trace::TracedOpen;
using iowatch::collectors::trace::TracedSeek;
using iowatch::collectors::trace::TracedSync;
using iowatch::collectors::trace::TracedTransfer;

#define IOWATCH_MODE_ARG(flags)                    \
  mode_t mode = 0;                                 \
  if (TakesMode(flags)) {                          \
    va_list args;                                  \
    va_start(args, flags);                         \
    mode = static_cast<mode_t>(va_arg(args, int)); \
    va_end(args);                                  \
  }

// The library's only exported symbols (the rest is hidden: CMakeLists.txt).
#pragma GCC visibility push(default)
// The __*_chk and __open*_2 names are glibc's _FORTIFY_SOURCE entry points:
// interposed by those names or not at all.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {

int open(const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(flags, [&] { return Real().open(path, flags, mode); });
}

int open64(const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(flags, [&] { return Real().open64(path, flags, mode); });
}

int openat(int dir, const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(flags, [&] { return Real().openat(dir, path, flags, mode); });
}

int openat64(int dir, const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(flags, [&] { return Real().openat64(dir, path, flags, mode); });
}

int __open_2(const char* path, int flags) {
  return TracedOpen(flags, [&] { return Real().open_2(path, flags); });
}

int __open64_2(const char* path, int flags) {
  return TracedOpen(flags, [&] { return Real().open64_2(path, flags); });
}

int __openat_2(int dir, const char* path, int flags) {
  return TracedOpen(flags, [&] { return Real().openat_2(dir, path, flags); });
}

int __openat64_2(int dir, const char* path, int flags) {
  return TracedOpen(flags, [&] { return Real().openat64_2(dir, path, flags); });
}

int creat(const char* path, mode_t mode) {
  return TracedOpen(O_CREAT | O_WRONLY | O_TRUNC, [&] { return Real().creat(path, mode); });
}

int creat64(const char* path, mode_t mode) {
  return TracedOpen(O_CREAT | O_WRONLY | O_TRUNC, [&] { return Real().creat64(path, mode); });
}

ssize_t read(int fd, void* buffer, size_t count) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, count,
                        [&] { return Real().read(fd, buffer, count); });
}

ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, count,
                        [&] { return Real().read_chk(fd, buffer, count, buffer_size); });
}

ssize_t write(int fd, const void* buffer, size_t count) {
  return TracedTransfer(fd, Direction::kWrite, kAtCursor, count,
                        [&] { return Real().write(fd, buffer, count); });
}

ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return Real().pread(fd, buffer, count, offset); });
}

ssize_t pread64(int fd, void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return Real().pread64(fd, buffer, count, offset); });
}

ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return Real().pread_chk(fd, buffer, count, offset, buffer_size); });
}

ssize_t __pread64_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return Real().pread64_chk(fd, buffer, count, offset, buffer_size); });
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kWrite, At(offset), count,
                        [&] { return Real().pwrite(fd, buffer, count, offset); });
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kWrite, At(offset), count,
                        [&] { return Real().pwrite64(fd, buffer, count, offset); });
}

ssize_t readv(int fd, const struct iovec* iov, int count) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, IovecBytes(iov, count),
                        [&] { return Real().readv(fd, iov, count); });
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  return TracedTransfer(fd, Direction::kWrite, kAtCursor, IovecBytes(iov, count),
                        [&] { return Real().writev(fd, iov, count); });
}

off_t lseek(int fd, off_t offset, int whence) {
  return TracedSeek(fd, offset, whence, Real().lseek);
}

off_t lseek64(int fd, off_t offset, int whence) {
  return TracedSeek(fd, offset, whence, Real().lseek64);
}

int fsync(int fd) { return TracedSync(fd, Real().fsync); }

int fdatasync(int fd) { return TracedSync(fd, Real().fdatasync); }

int close(int fd) {
  iowatch::collectors::trace::Tracer* tracer = iowatch::collectors::trace::Active();
  iowatch::collectors::trace::Slot* slot = tracer == nullptr ? nullptr : tracer->Traced(fd);
  if (slot == nullptr) return Real().close(fd);
  uint32_t file_id = 0;
  {
    iowatch::collectors::trace::Busy busy;
    file_id = tracer->Closing(fd, *slot);
  }
  const uint64_t start = tracer->Ticks();
  const int result = Real().close(fd);
  const uint64_t ticks = tracer->Ticks() - start;
  iowatch::collectors::trace::Busy busy;
  tracer->Closed(file_id, result < 0, ticks);
  return result;
}

int close_range(unsigned first, unsigned last, int flags) {
  if (Real().close_range == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  iowatch::collectors::trace::Tracer* tracer = iowatch::collectors::trace::Active();
  const int result = Real().close_range(first, last, flags);
  if (tracer != nullptr && result == 0 && (flags & CLOSE_RANGE_CLOEXEC) == 0) {
    iowatch::collectors::trace::Busy busy;
    tracer->ClosedRange(first, last);
  }
  return result;
}

int dup(int fd) {
  return TracedDup(fd, [&] { return Real().dup(fd); });
}

int dup2(int fd, int new_fd) {
  return TracedDup(fd, [&] { return Real().dup2(fd, new_fd); });
}

int dup3(int fd, int new_fd, int flags) {
  return TracedDup(fd, [&] { return Real().dup3(fd, new_fd, flags); });
}

}  // extern "C"
// NOLINTEND(bugprone-reserved-identifier)
#pragma GCC visibility pop
