// Names a thread as `top -H`, `ps -L`, perf and gdb show it (the kernel's
// comm, 15 bytes at most: longer names are cut). A daemon whose twenty
// threads are all called "iowatch" cannot say which of them costs what.
// Thread-safety: any thread may name any live thread of the process.
#pragma once

#include <pthread.h>

#include <string_view>

namespace iowatch {

void NameThread(pthread_t thread, std::string_view name);
inline void NameThisThread(std::string_view name) { NameThread(pthread_self(), name); }

}  // namespace iowatch
