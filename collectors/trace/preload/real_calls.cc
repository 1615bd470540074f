#include "collectors/trace/preload/real_calls.h"

#include <dlfcn.h>

#include <atomic>

namespace iowatch::collectors::trace {
namespace {

RealCalls g_real;  // the process's one table: interposed functions have no other context
std::atomic<bool> g_resolved{false};

template <class Function>
void Find(Function& slot, const char* name) {
  slot = reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

void Resolve() {
  Find(g_real.open, "open");
  Find(g_real.open64, "open64");
  Find(g_real.openat, "openat");
  Find(g_real.openat64, "openat64");
  Find(g_real.open_2, "__open_2");
  Find(g_real.open64_2, "__open64_2");
  Find(g_real.openat_2, "__openat_2");
  Find(g_real.openat64_2, "__openat64_2");
  Find(g_real.creat, "creat");
  Find(g_real.creat64, "creat64");
  Find(g_real.read, "read");
  Find(g_real.read_chk, "__read_chk");
  Find(g_real.write, "write");
  Find(g_real.pread, "pread");
  Find(g_real.pread64, "pread64");
  Find(g_real.pread_chk, "__pread_chk");
  Find(g_real.pread64_chk, "__pread64_chk");
  Find(g_real.pwrite, "pwrite");
  Find(g_real.pwrite64, "pwrite64");
  Find(g_real.readv, "readv");
  Find(g_real.writev, "writev");
  Find(g_real.lseek, "lseek");
  Find(g_real.lseek64, "lseek64");
  Find(g_real.fsync, "fsync");
  Find(g_real.fdatasync, "fdatasync");
  Find(g_real.close, "close");
  Find(g_real.close_range, "close_range");
  Find(g_real.dup, "dup");
  Find(g_real.dup2, "dup2");
  Find(g_real.dup3, "dup3");
}

}  // namespace

const RealCalls& Real() {
  if (!g_resolved.load(std::memory_order_acquire)) {
    Resolve();
    g_resolved.store(true, std::memory_order_release);
  }
  return g_real;
}

}  // namespace iowatch::collectors::trace
