// libiowatch-trace.so's data calls and its start: the C library's open,
// read and write calls, interposed through LD_PRELOAD, each calling the real
// function (real_calls.h) and telling the process's Tracer what happened.
// open/openat/creat (and their 64-bit and _FORTIFY_SOURCE variants),
// read/write, pread/pwrite (and 64), readv/writev, lseek (and 64),
// fsync/fdatasync; the calls that make, copy and close descriptors are in
// interpose_descriptors.cc. errno is what the real call left.
// Not seen: what the C library does inside itself (stdio's reads and
// writes), mmap'd access, preadv/pwritev, io_uring and libaio; a process
// that ends in _exit() or a signal or execs writes no report. A vfork
// child's reads and writes before it execs count as its parent's (telling
// it apart costs a system call, too much on every read).
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>

#include "trace/preload/interpose_context.h"
#include "trace/preload/real_calls.h"

namespace iowatch::trace {
Tracer* g_tracer = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool t_busy = false;

namespace {

// The forks under way on this thread, innermost in bit 0: 1 when its
// prepare handler left the tracer alone. A fork from a signal handler can
// land inside another fork's handlers on the same thread (the program's
// fork interrupted while the first one holds the tracer's mutex): the
// bits keep each fork's after-handler to what its own prepare did. Each
// handler changes the word by a read and a write; a fork nested between
// the two puts it back as it found it.
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_forks_skipped = 0;

bool TakesMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

template <class Call>
int TracedOpen(int dir, const char* path, int flags, Call&& call) {
  Tracer* tracer = Active();
  if (tracer == nullptr) return call();
  tracer->BeginOpen();
  const uint64_t start = tracer->Ticks();
  const int fd = call();
  const uint64_t ticks = tracer->Ticks() - start;
  if (fd >= 0 && tracer->InOwnProcess()) {
    Busy busy;
    tracer->Opened(fd, dir, path, flags, ticks);
  }
  tracer->EndOpen();
  return fd;
}

template <class Call>
auto TracedTransfer(int fd, Direction direction, uint64_t offset, uint64_t requested, Call&& call) {
  Tracer* tracer = Active();
  const TracedSlot slot = tracer == nullptr ? TracedSlot{} : tracer->Traced(fd);
  if (!slot) return call();
  const uint64_t start = tracer->Ticks();
  const auto result = call();
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Transfer(slot, direction, offset, requested, static_cast<int64_t>(result), ticks);
  return result;
}

off_t TracedSeek(int fd, off_t offset, int whence, off_t (*real)(int, off_t, int)) {
  Tracer* tracer = Active();
  const TracedSlot slot = tracer == nullptr ? TracedSlot{} : tracer->Traced(fd);
  if (!slot) return CallReal(real, fd, offset, whence);
  const uint64_t start = tracer->Ticks();
  const off_t result = CallReal(real, fd, offset, whence);
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Seeked(slot, result, ticks);
  return result;
}

int TracedSync(int fd, int (*real)(int)) {
  Tracer* tracer = Active();
  const TracedSlot slot = tracer == nullptr ? TracedSlot{} : tracer->Traced(fd);
  if (!slot) return CallReal(real, fd);
  const uint64_t start = tracer->Ticks();
  const int result = CallReal(real, fd);
  const uint64_t ticks = tracer->Ticks() - start;
  Busy busy;
  tracer->Synced(slot, result < 0, ticks);
  return result;
}

uint64_t IovecBytes(const iovec* iov, int count) {
  uint64_t bytes = 0;
  for (int i = 0; i < count && iov != nullptr; ++i) bytes += iov[i].iov_len;
  return bytes;
}

uint64_t At(off_t offset) { return offset < 0 ? kAtCursor : static_cast<uint64_t>(offset); }

// A fork from a signal handler that interrupted this thread inside the
// tracer (or inside another fork's handlers, which hold its mutex): the
// mutex may be held below us, so it is neither taken nor given back, and
// the child, whose tables may be half updated, is not traced. A fork that
// takes the mutex marks the thread busy first, so that a signal between the
// two finds it busy rather than waiting for a mutex its own thread holds.
void PrepareFork() {
  const bool skip = g_tracer == nullptr || t_busy;  // null: an untraced child forks again
  t_forks_skipped = (t_forks_skipped << 1) | (skip ? 1u : 0u);
  if (skip) return;
  t_busy = true;
  g_tracer->BeforeFork();
}

// Whether this fork's prepare handler left the tracer alone; the fork is
// taken off the thread's word.
bool ForkSkipped() {
  const bool skipped = (t_forks_skipped & 1u) != 0;
  t_forks_skipped >>= 1;
  return skipped;
}

void AfterForkInParent() {
  // Null: a child of a fork nested in this one, gone on with the fork.
  if (ForkSkipped() || g_tracer == nullptr) return;
  g_tracer->AfterForkParent();
  t_busy = false;
}

void AfterForkInChild() {
  if (ForkSkipped()) {
    if (t_busy) g_tracer = nullptr;  // the tables may be half updated
    return;
  }
  if (g_tracer != nullptr) g_tracer->AfterForkChild();
  t_busy = false;
}

__attribute__((constructor)) void StartTracing() {
  (void)Real();
  auto* tracer = new Tracer;     // never deleted: see g_tracer
  if (!tracer->Start()) return;  // no memory for the tables: every call passes through
  pthread_atfork(PrepareFork, AfterForkInParent, AfterForkInChild);
  g_tracer = tracer;
}

__attribute__((destructor)) void FinishTracing() {
  if (g_tracer == nullptr) return;
  const Busy busy;
  g_tracer->Finish();
}

}  // namespace
}  // namespace iowatch::trace

using iowatch::trace::At;
using iowatch::trace::CallReal;
using iowatch::trace::Direction;
using iowatch::trace::IovecBytes;
using iowatch::trace::kAtCursor;
using iowatch::trace::Real;
using iowatch::trace::TakesMode;
using iowatch::trace::TracedOpen;
using iowatch::trace::TracedSeek;
using iowatch::trace::TracedSync;
using iowatch::trace::TracedTransfer;

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
  return TracedOpen(AT_FDCWD, path, flags,
                    [&] { return CallReal(Real().open, path, flags, mode); });
}

int open64(const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(AT_FDCWD, path, flags,
                    [&] { return CallReal(Real().open64, path, flags, mode); });
}

int openat(int dir, const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(dir, path, flags,
                    [&] { return CallReal(Real().openat, dir, path, flags, mode); });
}

int openat64(int dir, const char* path, int flags, ...) {
  IOWATCH_MODE_ARG(flags)
  return TracedOpen(dir, path, flags,
                    [&] { return CallReal(Real().openat64, dir, path, flags, mode); });
}

int __open_2(const char* path, int flags) {
  return TracedOpen(AT_FDCWD, path, flags, [&] { return CallReal(Real().open_2, path, flags); });
}

int __open64_2(const char* path, int flags) {
  return TracedOpen(AT_FDCWD, path, flags, [&] { return CallReal(Real().open64_2, path, flags); });
}

int __openat_2(int dir, const char* path, int flags) {
  return TracedOpen(dir, path, flags, [&] { return CallReal(Real().openat_2, dir, path, flags); });
}

int __openat64_2(int dir, const char* path, int flags) {
  return TracedOpen(dir, path, flags,
                    [&] { return CallReal(Real().openat64_2, dir, path, flags); });
}

int creat(const char* path, mode_t mode) {
  return TracedOpen(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                    [&] { return CallReal(Real().creat, path, mode); });
}

int creat64(const char* path, mode_t mode) {
  return TracedOpen(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                    [&] { return CallReal(Real().creat64, path, mode); });
}

ssize_t read(int fd, void* buffer, size_t count) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, count,
                        [&] { return CallReal(Real().read, fd, buffer, count); });
}

ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, count,
                        [&] { return CallReal(Real().read_chk, fd, buffer, count, buffer_size); });
}

ssize_t write(int fd, const void* buffer, size_t count) {
  return TracedTransfer(fd, Direction::kWrite, kAtCursor, count,
                        [&] { return CallReal(Real().write, fd, buffer, count); });
}

ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return CallReal(Real().pread, fd, buffer, count, offset); });
}

ssize_t pread64(int fd, void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count,
                        [&] { return CallReal(Real().pread64, fd, buffer, count, offset); });
}

ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count, [&] {
    return CallReal(Real().pread_chk, fd, buffer, count, offset, buffer_size);
  });
}

ssize_t __pread64_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size) {
  return TracedTransfer(fd, Direction::kRead, At(offset), count, [&] {
    return CallReal(Real().pread64_chk, fd, buffer, count, offset, buffer_size);
  });
}

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kWrite, At(offset), count,
                        [&] { return CallReal(Real().pwrite, fd, buffer, count, offset); });
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  return TracedTransfer(fd, Direction::kWrite, At(offset), count,
                        [&] { return CallReal(Real().pwrite64, fd, buffer, count, offset); });
}

ssize_t readv(int fd, const struct iovec* iov, int count) {
  return TracedTransfer(fd, Direction::kRead, kAtCursor, IovecBytes(iov, count),
                        [&] { return CallReal(Real().readv, fd, iov, count); });
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  return TracedTransfer(fd, Direction::kWrite, kAtCursor, IovecBytes(iov, count),
                        [&] { return CallReal(Real().writev, fd, iov, count); });
}

off_t lseek(int fd, off_t offset, int whence) {
  return TracedSeek(fd, offset, whence, Real().lseek);
}

off_t lseek64(int fd, off_t offset, int whence) {
  return TracedSeek(fd, offset, whence, Real().lseek64);
}

int fsync(int fd) { return TracedSync(fd, Real().fsync); }

int fdatasync(int fd) { return TracedSync(fd, Real().fdatasync); }

}  // extern "C"
// NOLINTEND(bugprone-reserved-identifier)
#pragma GCC visibility pop
