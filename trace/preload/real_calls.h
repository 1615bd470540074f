// The C library's own functions behind the ones the trace library
// interposes, found with dlsym(RTLD_NEXT) on first use (a constructor of
// another library may call open() before ours ran).
// Resolution runs once. A dlsym that fails allocates its error message, and
// an allocator the program brings may do I/O in malloc: that I/O comes back
// here while the table is being filled. Such a re-entrant call (same thread)
// gets the table as it is, unresolved entries null; other threads wait for
// the resolution to end rather than call through a half-filled table. Names
// that a C library may lack (close_range and closefrom since glibc 2.34,
// fcntl64 since 2.28) are looked up last, so that the calls an allocator
// makes are found before any lookup can fail. CallReal turns a null entry
// into -1 and ENOSYS.
// Thread-safety: Real() from any thread.
#pragma once

#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <type_traits>
#include <utility>

namespace iowatch::trace {

struct RealCalls {
  int (*open)(const char*, int, ...) = nullptr;
  int (*open64)(const char*, int, ...) = nullptr;
  int (*openat)(int, const char*, int, ...) = nullptr;
  int (*openat64)(int, const char*, int, ...) = nullptr;
  int (*open_2)(const char*, int) = nullptr;  // _FORTIFY_SOURCE's __open_2
  int (*open64_2)(const char*, int) = nullptr;
  int (*openat_2)(int, const char*, int) = nullptr;
  int (*openat64_2)(int, const char*, int) = nullptr;
  int (*creat)(const char*, mode_t) = nullptr;
  int (*creat64)(const char*, mode_t) = nullptr;
  ssize_t (*read)(int, void*, size_t) = nullptr;
  ssize_t (*read_chk)(int, void*, size_t, size_t) = nullptr;  // __read_chk
  ssize_t (*write)(int, const void*, size_t) = nullptr;
  ssize_t (*pread)(int, void*, size_t, off_t) = nullptr;
  ssize_t (*pread64)(int, void*, size_t, off_t) = nullptr;
  ssize_t (*pread_chk)(int, void*, size_t, off_t, size_t) = nullptr;
  ssize_t (*pread64_chk)(int, void*, size_t, off_t, size_t) = nullptr;
  ssize_t (*pwrite)(int, const void*, size_t, off_t) = nullptr;
  ssize_t (*pwrite64)(int, const void*, size_t, off_t) = nullptr;
  ssize_t (*readv)(int, const iovec*, int) = nullptr;
  ssize_t (*writev)(int, const iovec*, int) = nullptr;
  off_t (*lseek)(int, off_t, int) = nullptr;
  off_t (*lseek64)(int, off_t, int) = nullptr;
  int (*fsync)(int) = nullptr;
  int (*fdatasync)(int) = nullptr;
  int (*close)(int) = nullptr;
  int (*dup)(int) = nullptr;
  int (*dup2)(int, int) = nullptr;
  int (*dup3)(int, int, int) = nullptr;
  int (*fcntl)(int, int, ...) = nullptr;
  int (*fclose)(FILE*) = nullptr;
  FILE* (*freopen)(const char*, const char*, FILE*) = nullptr;
  FILE* (*freopen64)(const char*, const char*, FILE*) = nullptr;
  long (*syscall)(long, ...) = nullptr;
  int (*socket)(int, int, int) = nullptr;
  int (*socketpair)(int, int, int, int*) = nullptr;
  int (*accept)(int, sockaddr*, socklen_t*) = nullptr;
  int (*accept4)(int, sockaddr*, socklen_t*, int) = nullptr;
  int (*pipe)(int*) = nullptr;
  int (*pipe2)(int*, int) = nullptr;
  int (*eventfd)(unsigned, int) = nullptr;
  // Last: the names a C library may lack.
  int (*fcntl64)(int, int, ...) = nullptr;
  int (*close_range)(unsigned, unsigned, int) = nullptr;
  void (*closefrom)(int) = nullptr;
};

// How a name is found: dlsym(RTLD_NEXT), but in tests.
using FindSymbol = void* (*)(const char* name);

// One table, resolved once through `find` in the order above, with the
// guard described at the top. The library's is Real(); tests make their own.
class RealCallsResolver {
 public:
  const RealCalls& Get(FindSymbol find) {
    if (state_.load(std::memory_order_acquire) == kResolved) [[likely]]
      return table_;
    return Resolve(find);
  }

 private:
  enum : int { kUnresolved, kResolving, kResolved };
  const RealCalls& Resolve(FindSymbol find);
  RealCalls table_;
  std::atomic<int> state_{kUnresolved};
};

extern RealCallsResolver g_real_calls;  // the process's one table
void* NextSymbol(const char* name);     // dlsym(RTLD_NEXT, name)

// The process's table; resolved on the first call. Inline: every
// interposed call goes through it, and once resolved it is one load.
inline const RealCalls& Real() { return g_real_calls.Get(NextSymbol); }

// `function(args...)`, or -1 (nullptr for a FILE*) with errno ENOSYS when
// the C library has no such function.
template <class Result, class... Parameters, class... Arguments>
Result CallReal(Result (*function)(Parameters...), Arguments&&... args) {
  if (function != nullptr) return function(std::forward<Arguments>(args)...);
  errno = ENOSYS;
  if constexpr (std::is_pointer_v<Result>) {
    return nullptr;
  } else if constexpr (!std::is_void_v<Result>) {
    return static_cast<Result>(-1);
  }
}

template <class Result, class... Parameters, class... Arguments>
Result CallReal(Result (*function)(Parameters..., ...), Arguments&&... args) {
  if (function != nullptr) return function(std::forward<Arguments>(args)...);
  errno = ENOSYS;
  return static_cast<Result>(-1);
}

}  // namespace iowatch::trace
