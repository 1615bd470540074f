// The C library's own functions behind the ones the trace library
// interposes, found with dlsym(RTLD_NEXT) on first use (a constructor of
// another library may call open() before ours ran).
// Thread-safety: Resolve() may race with itself; every thread stores the
// same addresses.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

namespace iowatch::collectors::trace {

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
  int (*close_range)(unsigned, unsigned, int) = nullptr;
  int (*dup)(int) = nullptr;
  int (*dup2)(int, int) = nullptr;
  int (*dup3)(int, int, int) = nullptr;
};

// The resolved table; resolves on the first call.
const RealCalls& Real();

}  // namespace iowatch::collectors::trace
