// libiowatch-trace.so's calls that close, copy and make descriptors, which
// keep its descriptor table true to the kernel's (a number reused after a
// close it missed would be counted as the old file):
//   closing  close, close_range, closefrom, fclose and freopen (stdio closes
//            inside itself, where the tracer cannot see: fclose(fdopen(fd))),
//            syscall(SYS_close / SYS_close_range): the slot is retired before
//            the descriptor goes, so that its number, handed out again at
//            once, never meets it
//   copying  dup, dup2, dup3, fcntl(F_DUPFD / F_DUPFD_CLOEXEC) (and fcntl64,
//            syscall(SYS_dup*)): the copy is traced as the same file
//   making   socket, socketpair, accept, accept4, pipe, pipe2, eventfd: a
//            traced slot of the new number was closed behind the tracer (a
//            system call issued by hand, a library's own close) and is
//            retired before it counts a pipe's traffic as the file's
// Each of these passes through untouched in a vfork child (tracer.h), and
// costs one lookup when no traced slot is involved. errno is what the real
// call left.
#include <fcntl.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <initializer_list>
#include <optional>

#include "trace/preload/interpose_context.h"
#include "trace/preload/real_calls.h"

namespace iowatch::trace {
namespace {

// Runs `before`, the real `call` and `after(result)` with the tracer's
// descriptors held (Tracer::Hold) and this thread busy; the caller sees the
// errno the real call left.
template <class Before, class Call, class After>
auto Held(Tracer& tracer, Before&& before, Call&& call, After&& after) {
  int error = 0;
  const auto result = [&] {
    Busy busy;
    const auto lock = tracer.Hold();
    before();
    const auto r = call();
    error = errno;
    after(r);
    return r;
  }();
  errno = error;
  return result;
}

// `call` closes `fd` (close, fclose, freopen, syscall); `failed` says from
// its result whether it did. A number traced, or one an open under way may
// trace, is retired and closed under one hold.
template <class Call, class Failed>
auto TracedClose(int fd, Call&& call, Failed&& failed) {
  Tracer* tracer = Active();
  if (tracer == nullptr || !tracer->MayMeetSlot(fd) || !tracer->InOwnProcess()) return call();
  std::optional<uint32_t> file;
  uint64_t start = 0;
  return Held(
      *tracer,
      [&] {
        file = tracer->ClosingHeld(fd);
        start = tracer->Ticks();
      },
      call,
      [&](const auto& result) {
        if (file) tracer->ClosedHeld(*file, failed(result), tracer->Ticks() - start);
      });
}

bool Negative(long result) { return result < 0; }

template <class Call>
auto TracedCloseRange(unsigned first, unsigned last, int flags, Call&& call) {
  Tracer* tracer = Active();
  if (tracer == nullptr || first > last || (flags & CLOSE_RANGE_CLOEXEC) != 0 ||
      !tracer->InOwnProcess()) {
    return call();
  }
  return Held(
      *tracer, [&] { tracer->ClosedRangeHeld(first, last); }, call, [](const auto&) {});
}

// `call` makes a copy of old_fd: on the lowest free number (dup,
// fcntl(F_DUPFD): `target` -1), or on `target` (dup2, dup3), which it closes
// first if open: that is retired and replaced under one hold, as a close is.
template <class Call>
auto TracedDup(int old_fd, int target, Call&& call) {
  Tracer* tracer = Active();
  if (tracer == nullptr) return call();
  if (target >= 0 && target != old_fd) {
    if (!tracer->InOwnProcess()) return call();
    return Held(
        *tracer, [&] { tracer->RetireHeld(target); }, call,
        [&](const auto& new_fd) {
          if (new_fd >= 0) tracer->DuplicatedHeld(old_fd, static_cast<int>(new_fd));
        });
  }
  const auto new_fd = call();
  if (new_fd < 0) return new_fd;
  const int copy = static_cast<int>(new_fd);
  if ((tracer->MayMeetSlot(copy) || tracer->Traced(old_fd)) && tracer->InOwnProcess()) {
    Busy busy;
    tracer->Duplicated(old_fd, copy);
  }
  return new_fd;
}

// New descriptors that are no traced file.
void Created(std::initializer_list<int> fds) {
  Tracer* tracer = Active();
  if (tracer == nullptr) return;
  for (const int fd : fds) {
    if (fd >= 0 && tracer->MayMeetSlot(fd) && tracer->InOwnProcess()) {
      Busy busy;
      tracer->Created(fd);
    }
  }
}

int CreatedOne(int fd) {
  Created({fd});
  return fd;
}

int CreatedPair(int result, const int* fds) {
  if (result == 0) Created({fds[0], fds[1]});
  return result;
}

bool Duplicates(int command) { return command == F_DUPFD || command == F_DUPFD_CLOEXEC; }

template <class Fcntl>
int TracedFcntl(Fcntl real, int fd, int command, void* argument) {
  if (!Duplicates(command)) return CallReal(real, fd, command, argument);
  return TracedDup(fd, -1, [&] { return CallReal(real, fd, command, argument); });
}

}  // namespace
}  // namespace iowatch::trace

using iowatch::trace::CallReal;
using iowatch::trace::CreatedOne;
using iowatch::trace::CreatedPair;
using iowatch::trace::Negative;
using iowatch::trace::Real;
using iowatch::trace::TracedClose;
using iowatch::trace::TracedCloseRange;
using iowatch::trace::TracedDup;
using iowatch::trace::TracedFcntl;

// The library's only exported symbols (the rest is hidden: CMakeLists.txt).
#pragma GCC visibility push(default)
extern "C" {

int close(int fd) {
  return TracedClose(
      fd, [&] { return CallReal(Real().close, fd); }, Negative);
}

int close_range(unsigned first, unsigned last, int flags) {
  return TracedCloseRange(first, last, flags,
                          [&] { return CallReal(Real().close_range, first, last, flags); });
}

void closefrom(int lowest) {
  TracedCloseRange(static_cast<unsigned>(lowest), UINT_MAX, 0, [&] {
    CallReal(Real().closefrom, lowest);
    return 0;
  });
}

int fclose(FILE* stream) {
  return TracedClose(
      stream == nullptr ? -1 : fileno(stream), [&] { return CallReal(Real().fclose, stream); },
      [](int result) { return result != 0; });
}

FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return TracedClose(
      stream == nullptr ? -1 : fileno(stream),
      [&] { return CallReal(Real().freopen, path, mode, stream); },
      [](FILE* result) { return result == nullptr; });
}

FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return TracedClose(
      stream == nullptr ? -1 : fileno(stream),
      [&] { return CallReal(Real().freopen64, path, mode, stream); },
      [](FILE* result) { return result == nullptr; });
}

int dup(int fd) {
  return TracedDup(fd, -1, [&] { return CallReal(Real().dup, fd); });
}

int dup2(int fd, int new_fd) {
  return TracedDup(fd, new_fd, [&] { return CallReal(Real().dup2, fd, new_fd); });
}

int dup3(int fd, int new_fd, int flags) {
  return TracedDup(fd, new_fd, [&] { return CallReal(Real().dup3, fd, new_fd, flags); });
}

// The third argument is read as glibc's own fcntl reads it: a pointer-sized
// word, whatever the command.
int fcntl(int fd, int command, ...) {
  va_list args;
  va_start(args, command);
  void* argument = va_arg(args, void*);
  va_end(args);
  return TracedFcntl(Real().fcntl, fd, command, argument);
}

int fcntl64(int fd, int command, ...) {
  va_list args;
  va_start(args, command);
  void* argument = va_arg(args, void*);
  va_end(args);
  return TracedFcntl(Real().fcntl64, fd, command, argument);
}

// syscall(2) takes six words whatever the number, as glibc's does. The
// numbers that close or copy descriptors are followed; the rest pass.
long syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& word : a) word = va_arg(args, long);
  va_end(args);
  const auto real = [&] {
    return CallReal(Real().syscall, number, a[0], a[1], a[2], a[3], a[4], a[5]);
  };
  switch (number) {
    case SYS_close:
      return TracedClose(static_cast<int>(a[0]), real, Negative);
#ifdef SYS_close_range
    case SYS_close_range:
      return TracedCloseRange(static_cast<unsigned>(a[0]), static_cast<unsigned>(a[1]),
                              static_cast<int>(a[2]), real);
#endif
#ifdef SYS_dup2
    case SYS_dup2:
#endif
    case SYS_dup3:
      return TracedDup(static_cast<int>(a[0]), static_cast<int>(a[1]), real);
    case SYS_dup:
      return TracedDup(static_cast<int>(a[0]), -1, real);
    default:
      return real();
  }
}

int socket(int domain, int type, int protocol) {
  return CreatedOne(CallReal(Real().socket, domain, type, protocol));
}

int socketpair(int domain, int type, int protocol, int fds[2]) {
  return CreatedPair(CallReal(Real().socketpair, domain, type, protocol, fds), fds);
}

int accept(int fd, sockaddr* address, socklen_t* length) {
  return CreatedOne(CallReal(Real().accept, fd, address, length));
}

int accept4(int fd, sockaddr* address, socklen_t* length, int flags) {
  return CreatedOne(CallReal(Real().accept4, fd, address, length, flags));
}

int pipe(int fds[2]) { return CreatedPair(CallReal(Real().pipe, fds), fds); }

int pipe2(int fds[2], int flags) { return CreatedPair(CallReal(Real().pipe2, fds, flags), fds); }

int eventfd(unsigned initial, int flags) {
  return CreatedOne(CallReal(Real().eventfd, initial, flags));
}

}  // extern "C"
#pragma GCC visibility pop
