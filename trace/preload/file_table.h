// The files a traced process opened: per path its FileTrace (what the closed
// opens of it did), in storage mapped once at the start and never from the
// program's allocator. An open() in a signal handler that interrupted the
// program inside malloc reaches Find, which therefore allocates nothing
// (malloc is not async-signal-safe): names go into a mapped arena, entries into a mapped
// array, the lookup is an open-addressing index; the name of a descriptor is
// read (readlink of /proc/self/fd/N) into a mapped scratch buffer too, not
// onto a stack that may be a small signal stack. Pages are touched as they
// are used (MAP_NORESERVE): about 20 MiB of address space, a few KiB of it
// resident for a program of a few files.
// At most kMaxTracedFiles files apart; the ones beyond share one entry,
// kOtherFiles.
// Thread-safety: none; the tracer calls it under its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/file_trace.h"

namespace iowatch::trace {

class FileTable {
 public:
  static constexpr size_t kMaxNameBytes = 4096;  // PATH_MAX: the longest name readlink gives

  // Maps the storage; false when the memory cannot be had.
  bool Map();

  // The name of `fd` as /proc/self/fd shows it, in the scratch buffer (valid
  // until the next call); empty when the descriptor is no longer open (closed
  // by another thread since) or has no path ("pipe:[N]", "socket:[N]",
  // "anon_inode:[eventfd]": the number given to one of those by another
  // thread since the caller looked); "(descriptor N)" when /proc cannot say.
  std::string_view NameOf(int fd);

  // The entry of `name`, added when new (kOtherFiles's once the table is full).
  uint32_t Find(std::string_view name);

  std::string_view Name(uint32_t id) const;
  FileTrace& Trace(uint32_t id) { return entries_[id].trace; }
  uint32_t size() const { return count_; }

  // Every entry's trace back to zero (a forked child counts from zero).
  void ResetTraces();

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
    FileTrace trace;
  };

  uint32_t Add(std::string_view name, uint64_t hash);

  Entry* entries_ = nullptr;   // kMaxTracedFiles + 1
  uint32_t* index_ = nullptr;  // entry + 1 per cell, 0 = empty
  char* names_ = nullptr;      // the names, one after the other
  char* scratch_ = nullptr;    // kMaxNameBytes for NameOf
  uint32_t count_ = 0;
  size_t names_used_ = 0;
};

}  // namespace iowatch::trace
