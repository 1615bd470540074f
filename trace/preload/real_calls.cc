#include "trace/preload/real_calls.h"

#include <dlfcn.h>
#include <sched.h>

#include <atomic>

namespace iowatch::trace {
namespace {

// The resolver filling a table on this thread: a call that comes back from
// inside its dlsym (an allocator doing I/O) must not start another.
__attribute__((tls_model("initial-exec"))) thread_local const RealCallsResolver* t_resolving =
    nullptr;

template <class Function>
void Find(Function& slot, FindSymbol find, const char* name) {
  slot = reinterpret_cast<Function>(find(name));
}

void FillTable(RealCalls& table, FindSymbol find) {
  Find(table.open, find, "open");
  Find(table.open64, find, "open64");
  Find(table.openat, find, "openat");
  Find(table.openat64, find, "openat64");
  Find(table.open_2, find, "__open_2");
  Find(table.open64_2, find, "__open64_2");
  Find(table.openat_2, find, "__openat_2");
  Find(table.openat64_2, find, "__openat64_2");
  Find(table.creat, find, "creat");
  Find(table.creat64, find, "creat64");
  Find(table.read, find, "read");
  Find(table.read_chk, find, "__read_chk");
  Find(table.write, find, "write");
  Find(table.pread, find, "pread");
  Find(table.pread64, find, "pread64");
  Find(table.pread_chk, find, "__pread_chk");
  Find(table.pread64_chk, find, "__pread64_chk");
  Find(table.pwrite, find, "pwrite");
  Find(table.pwrite64, find, "pwrite64");
  Find(table.readv, find, "readv");
  Find(table.writev, find, "writev");
  Find(table.lseek, find, "lseek");
  Find(table.lseek64, find, "lseek64");
  Find(table.fsync, find, "fsync");
  Find(table.fdatasync, find, "fdatasync");
  Find(table.close, find, "close");
  Find(table.dup, find, "dup");
  Find(table.dup2, find, "dup2");
  Find(table.dup3, find, "dup3");
  Find(table.fcntl, find, "fcntl");
  Find(table.fclose, find, "fclose");
  Find(table.freopen, find, "freopen");
  Find(table.freopen64, find, "freopen64");
  Find(table.syscall, find, "syscall");
  Find(table.socket, find, "socket");
  Find(table.socketpair, find, "socketpair");
  Find(table.accept, find, "accept");
  Find(table.accept4, find, "accept4");
  Find(table.pipe, find, "pipe");
  Find(table.pipe2, find, "pipe2");
  Find(table.eventfd, find, "eventfd");
  Find(table.fcntl64, find, "fcntl64");
  Find(table.close_range, find, "close_range");
  Find(table.closefrom, find, "closefrom");
}

}  // namespace

constinit RealCallsResolver g_real_calls;

void* NextSymbol(const char* name) { return dlsym(RTLD_NEXT, name); }

const RealCalls& RealCallsResolver::Resolve(FindSymbol find) {
  if (state_.load(std::memory_order_acquire) == kResolved || t_resolving == this) return table_;
  int expected = kUnresolved;
  if (state_.compare_exchange_strong(expected, kResolving, std::memory_order_acq_rel)) {
    t_resolving = this;
    FillTable(table_, find);
    t_resolving = nullptr;
    state_.store(kResolved, std::memory_order_release);
    return table_;
  }
  // Another thread resolves: a few dozen lookups, microseconds.
  while (state_.load(std::memory_order_acquire) != kResolved) sched_yield();
  return table_;
}

}  // namespace iowatch::trace
