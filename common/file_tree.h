// Reading files, in one place. ReadFile reads a whole file up to a size
// limit (procfs and sysfs files report size 0, so it reads until EOF instead
// of trusting stat(), and the limit keeps a runaway file from growing without
// bound). Only regular files are read (procfs and sysfs files are regular):
// a FIFO or a device planted in their place would block the reader forever
// or never end, so it is refused before the first read. FileTree is read-only access to a tree such
// as /proc or /sys rooted at an injectable path, so that the parsers, the probe target's device
// lookups and tests all run on fixtures (--path.procfs,
// --path.sysfs): nothing reads procfs or sysfs but through one.
// Thread-safety: ReadFile is a pure function of the filesystem; a FileTree is
// immutable after construction and safe to share between threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch {

struct ReadFileOptions {
  std::string_view open_error = "cannot open";  // the message's words for each failure
  std::string_view read_error = "cannot read";
  size_t max_bytes = kDefaultMaxBytes;  // beyond this: kInvalidArgument, nothing returned
  // The default and every FileTree read refuse what is not a regular file;
  // a command reading a file the user named may accept a pipe or a FIFO.
  bool regular_only = true;
  // false: a symlink as the last component is refused, not followed (a
  // program's own state file, which nobody has reason to link elsewhere).
  bool follow_symlinks = true;
  // When !regular_only: how long a named FIFO may stay unwritten (no writer,
  // or one that has not written yet) before the read gives up with kIo
  // "…: a FIFO nothing wrote to within N ms". Once data comes, the reads wait
  // for the writer as a pipe's do. A pipe (bash's <(…)) has its writer from
  // the start and is not timed.
  std::chrono::milliseconds fifo_wait = kDefaultFifoWait;

  static constexpr size_t kDefaultMaxBytes = 64 << 20;
  static constexpr std::chrono::milliseconds kDefaultFifoWait{30'000};
};

// The whole content of `path`. Errors carry the path and errno: ENOENT (and
// ENODEV, ENXIO) is kNotFound; a file longer than max_bytes, not a regular
// file when regular_only, a symlink unless follow_symlinks, or a path with a
// NUL byte (which the kernel would cut) is kInvalidArgument. Every open is
// non-blocking, so no path (a FIFO with no writer) can hang it: see fifo_wait.
Result<std::string> ReadFile(const std::filesystem::path& path,
                             const ReadFileOptions& options = {});

// kInvalidArgument "WHAT: expected a regular file, found a FIFO" (or a
// device, a socket, a directory) unless `fd` is a regular file: for a file
// read by another library (SQLite) that would block on a FIFO or never end
// on a device. Open it with O_NONBLOCK, or the open itself waits for a writer.
Status CheckRegularFile(int fd, std::string_view what, const std::string& path);

// The rest of an open descriptor (stdin, a pipe), with `name` in errors; the
// caller keeps the descriptor. regular_only is not checked.
Result<std::string> ReadDescriptor(int fd, std::string_view name,
                                   const ReadFileOptions& options = {});

// ReadFile a line at a time, for files too large to hold (what other
// programs append to): each line, without its newline, to line(text,
// number), numbers from 1; a line longer than options.max_bytes is neither
// held nor passed, but its number to too_long(number). Memory: one line and a
// 64 KiB buffer. Errors: ReadFile's, but never for the file's length.
Status ForEachLineOfFile(const std::filesystem::path& path,
                         const std::function<void(std::string_view, int)>& line,
                         const std::function<void(int)>& too_long,
                         const ReadFileOptions& options = {});

// What a FileTree read takes at most, per kind of file: a sysfs text
// attribute is at most a page; the largest procfs tables (stat on thousands of
// CPUs) are well under the default; diskstats grows with the devices (64 MiB
// is ~500,000 of them).
inline constexpr size_t kMaxSysfsAttributeBytes = 64 << 10;
inline constexpr size_t kMaxProcfsFileBytes = 4 << 20;
inline constexpr size_t kMaxDiskstatsBytes = 64 << 20;

// KeptFiles: procfs and sysfs files read again and again through
// descriptors kept open. A pread from offset 0 makes the kernel write a
// seq_file afresh (procps' vmstat and top read /proc/stat so), so a read is
// two system calls instead of open, fstat, read, read and close: on a VM,
// where each system call pays a hypercall, the opens were a fifth of an idle
// daemon's CPU. Only files on procfs and sysfs are kept (fstatfs); any other
// (a fixture tree under --path.procfs) is opened afresh each read, so a file
// replaced there is read anew. A read through a kept descriptor that fails
// (its process exited: ESRCH; its device went: ENODEV) closes it and opens
// the path again. At most `capacity` are kept (a quarter of the descriptor
// limit at most: the rest is the daemon's); Sweep closes those not read
// since the last Sweep (the processes gone).
// Thread-safety: one thread at a time (a source's worker).
class KeptFiles {
 public:
  explicit KeptFiles(size_t capacity = 64);
  ~KeptFiles();
  KeptFiles(const KeptFiles&) = delete;
  KeptFiles& operator=(const KeptFiles&) = delete;

  // ReadFile of `path` (a regular file of at most max_bytes), through a kept
  // descriptor where it may be kept.
  Result<std::string> Read(const std::filesystem::path& path, size_t max_bytes);
  void Sweep();
  size_t Kept() const { return files_.size(); }

 private:
  struct Open {
    int fd = -1;
    bool read = false;  // since the last Sweep
  };
  void Close(const std::string& path);

  size_t capacity_;
  std::map<std::string, Open, std::less<>> files_;  // by path
};

// A subdirectory and its inode number, as readdir reports it: on kernfs
// (cgroupfs, sysfs) the node's id, by which BPF programs name cgroups.
struct DirectoryEntry {
  std::string name;
  uint64_t inode = 0;
};

class FileTree {
 public:
  explicit FileTree(std::filesystem::path root) : root_(std::move(root)) {}

  // This tree, its files read through `kept` (KeptFiles): for a source that
  // reads the same files each sample. The copy is for `kept`'s one thread.
  FileTree Keeping(KeptFiles& kept) const {
    FileTree tree = *this;
    tree.kept_ = &kept;
    return tree;
  }

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path PathOf(std::string_view relative) const { return root_ / relative; }

  // ReadFile of root/relative: a regular file of at most max_bytes.
  Result<std::string> Read(std::string_view relative, size_t max_bytes = kMaxProcfsFileBytes) const;

  // Names of the entries of a directory (no "." or ".."), unsorted.
  Result<std::vector<std::string>> List(std::string_view relative) const;

  // Names of the subdirectories of a directory (symbolic links not
  // followed), unsorted: a cgroup's children among its ~30 files, with no
  // stat() per entry where the filesystem reports entry types.
  Result<std::vector<std::string>> ListDirectories(std::string_view relative) const;

  // ListDirectories with each one's inode number.
  Result<std::vector<DirectoryEntry>> ListDirectoryInodes(std::string_view relative) const;

  // The inode number of root/relative (a symbolic link followed).
  Result<uint64_t> InodeOf(std::string_view relative) const;

  bool Exists(std::string_view relative) const;

  // The number of entries of a procfs directory that reports it as its size
  // (Linux 6.2 and later: /proc/PID/fd): one stat, where listing builds a
  // dentry per entry (0.6 ms a scrape for the few hundred files the daemon
  // keeps open). Nothing where the tree is not procfs or the size is 0 (an
  // older kernel): the caller lists instead.
  std::optional<uint64_t> ProcfsEntryCount(std::string_view relative) const;

 private:
  Result<std::vector<DirectoryEntry>> ListEntries(std::string_view relative,
                                                  bool directories_only) const;

  std::filesystem::path root_;
  KeptFiles* kept_ = nullptr;  // not owned; Keeping's
};

}  // namespace iowatch
