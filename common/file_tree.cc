#include "common/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "common/terminal_text.h"

namespace iowatch {

namespace {

std::string_view FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// Closes the descriptor whatever happens.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int Release() { return std::exchange(fd_, -1); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

Status CheckRegularFile(int fd, std::string_view what, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return ErrnoError(errno, std::string(what), path);
  if (S_ISREG(info.st_mode)) return {};
  return MakeError(
      ErrorCode::kInvalidArgument,
      fmt::format("{}: expected a regular file, found {}", what, FileTypeName(info.st_mode)), path);
}

Result<std::string> ReadDescriptor(int fd, std::string_view name, const ReadFileOptions& options) {
  std::string content;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, std::string(options.read_error), std::string(name));
    }
    if (content.size() + static_cast<size_t>(n) > options.max_bytes) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: longer than {} bytes", options.read_error, options.max_bytes),
          std::string(name));
    }
    content.append(buffer, static_cast<size_t>(n));
  }
  return content;
}

namespace {

// Clears the O_NONBLOCK the open took, so that reads wait for data.
Status MakeBlocking(int fd, const std::filesystem::path& path, const ReadFileOptions& options) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return ErrnoError(errno, std::string(options.read_error), path.string());
  }
  return {};
}

// Waits up to options.fifo_wait for a writer of the named FIFO `fd` to write
// (or to open and close it), then makes `fd` blocking for the reads. A
// reader opened with O_NONBLOCK sees no hang-up until a writer has come
// (fifo(7)), so poll tells "nothing yet" from "ended".
Status AwaitFifoWriter(int fd, const std::filesystem::path& path, const ReadFileOptions& options) {
  pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
  const auto deadline = std::chrono::steady_clock::now() + options.fifo_wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int n = ::poll(&ready, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (n > 0) break;
    if (n < 0 && errno != EINTR) {
      return ErrnoError(errno, std::string(options.read_error), path.string());
    }
    if (n == 0) {
      return MakeError(ErrorCode::kIo,
                       fmt::format("{}: a FIFO nothing wrote to within {} ms (is its writer "
                                   "running?)",
                                   options.read_error, options.fifo_wait.count()),
                       path.string());
    }
  }
  return MakeBlocking(fd, path, options);
}

// A FIFO on a filesystem (not a pipe such as bash's <(…), whose writer
// exists from the start): the one kind whose open(2) would wait for a writer.
bool IsNamedFifo(int fd) {
  struct stat info {};
  struct statfs fs {};
  return ::fstat(fd, &info) == 0 && S_ISFIFO(info.st_mode) && ::fstatfs(fd, &fs) == 0 &&
         fs.f_type != PIPEFS_MAGIC;
}

// The file opened for reading; a regular one when options.regular_only.
Result<int> OpenToRead(const std::filesystem::path& path, const ReadFileOptions& options) {
  // open(2) would read the path up to its first NUL and open another file.
  if (path.native().find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: expected a path without NUL bytes", options.open_error),
                     TerminalText(path.native()));
  }
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
  // forever if none comes.
  const int flags =
      O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (options.follow_symlinks ? 0 : O_NOFOLLOW);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0 && errno == ELOOP && !options.follow_symlinks) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: expected a regular file, found a symbolic link", options.open_error),
        path.string());
  }
  if (fd < 0) return ErrnoError(errno, std::string(options.open_error), path.string());
  FdCloser closer(fd);
  if (options.regular_only) {
    if (Status regular = CheckRegularFile(fd, options.read_error, path.string()); !regular) {
      return ErrorOf(std::move(regular));
    }
  } else if (IsNamedFifo(fd)) {
    if (Status written = AwaitFifoWriter(fd, path, options); !written) {
      return ErrorOf(std::move(written));
    }
  } else if (Status blocking = MakeBlocking(fd, path, options); !blocking) {
    // A pipe, a terminal or a device the user named is read as it comes.
    return ErrorOf(std::move(blocking));
  }
  return closer.Release();
}

}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path, const ReadFileOptions& options) {
  auto fd = OpenToRead(path, options);
  if (!fd) return ErrorOf(fd);
  const FdCloser closer(*fd);
  return ReadDescriptor(*fd, path.string(), options);
}

Status ForEachLineOfFile(const std::filesystem::path& path,
                         const std::function<void(std::string_view, int)>& line,
                         const std::function<void(int)>& too_long, const ReadFileOptions& options) {
  auto fd = OpenToRead(path, options);
  if (!fd) return ErrorOf(fd);
  const FdCloser closer(*fd);
  // Not zeroed, and under malloc's mmap threshold (128 KiB): a zeroed 1 MiB
  // vector cost its mmap, 256 page faults and a memset on every call, most
  // of the filesystem source's time per sample.
  constexpr size_t kBufferBytes = size_t{64} * 1024;
  const auto buffer = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  std::string held;       // the line so far
  bool skipping = false;  // the line so far was longer than max_bytes
  int number = 1;
  for (;;) {
    const ssize_t n = ::read(*fd, buffer.get(), kBufferBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, std::string(options.read_error), path.string());
    std::string_view chunk(buffer.get(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t end = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, end);
      if (!skipping && held.size() + piece.size() > options.max_bytes) {
        skipping = true;
        std::string().swap(held);
      }
      if (!skipping) held.append(piece);
      if (end == std::string_view::npos) break;
      if (skipping) {
        too_long(number);
      } else {
        line(held, number);
      }
      held.clear();
      skipping = false;
      ++number;
      chunk.remove_prefix(end + 1);
    }
    if (n == 0) break;
  }
  if (skipping) too_long(number);
  if (!skipping && !held.empty()) line(held, number);
  return {};
}

Result<std::string> FileTree::Read(std::string_view relative, size_t max_bytes) const {
  if (kept_ != nullptr) return kept_->Read(PathOf(relative), max_bytes);
  return ReadFile(PathOf(relative), {.max_bytes = max_bytes});
}

namespace {

// The whole file from its start (pread: a seq_file written afresh), or the
// read's error.
Result<std::string> ReadFromStart(int fd, const std::string& path, size_t max_bytes) {
  std::string content;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(content.size()));
    if (n == 0) return content;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "cannot read", path);
    }
    if (content.size() + static_cast<size_t>(n) > max_bytes) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("cannot read: longer than {} bytes", max_bytes), path);
    }
    content.append(buffer, static_cast<size_t>(n));
  }
}

bool OnProcOrSysfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC);
}

size_t DescriptorShare(size_t capacity) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return capacity;
  return std::min<size_t>(capacity, limit.rlim_cur / 4);
}

}  // namespace

KeptFiles::KeptFiles(size_t capacity) : capacity_(DescriptorShare(capacity)) {}

KeptFiles::~KeptFiles() {
  for (const auto& [path, kept] : files_) ::close(kept.fd);
}

void KeptFiles::Close(const std::string& path) {
  const auto it = files_.find(path);
  if (it == files_.end()) return;
  ::close(it->second.fd);
  files_.erase(it);
}

Result<std::string> KeptFiles::Read(const std::filesystem::path& path, size_t max_bytes) {
  const std::string& name = path.native();
  if (const auto it = files_.find(name); it != files_.end()) {
    auto content = ReadFromStart(it->second.fd, name, max_bytes);
    if (content) {
      it->second.read = true;
      return content;
    }
    Close(name);  // gone or changed: opened afresh below
  }
  const ReadFileOptions options{.max_bytes = max_bytes};
  auto fd = OpenToRead(path, options);
  if (!fd) return ErrorOf(fd);
  FdCloser closer(*fd);
  auto content = ReadFromStart(*fd, name, max_bytes);
  if (content && files_.size() < capacity_ && OnProcOrSysfs(*fd)) {
    files_.emplace(name, Open{closer.Release(), true});
  }
  return content;
}

void KeptFiles::Sweep() {
  for (auto it = files_.begin(); it != files_.end();) {
    if (!it->second.read) {
      ::close(it->second.fd);
      it = files_.erase(it);
    } else {
      it->second.read = false;
      ++it;
    }
  }
}

namespace {

Result<std::vector<std::string>> NamesOf(Result<std::vector<DirectoryEntry>> entries) {
  if (!entries) return ErrorOf(std::move(entries));
  std::vector<std::string> names;
  names.reserve(entries->size());
  for (DirectoryEntry& entry : *entries) names.push_back(std::move(entry.name));
  return names;
}

}  // namespace

Result<std::vector<std::string>> FileTree::List(std::string_view relative) const {
  return NamesOf(ListEntries(relative, false));
}

Result<std::vector<std::string>> FileTree::ListDirectories(std::string_view relative) const {
  return NamesOf(ListEntries(relative, true));
}

Result<std::vector<DirectoryEntry>> FileTree::ListDirectoryInodes(std::string_view relative) const {
  return ListEntries(relative, true);
}

Result<uint64_t> FileTree::InodeOf(std::string_view relative) const {
  struct stat st {};
  const std::string path = PathOf(relative).string();
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  return static_cast<uint64_t>(st.st_ino);
}

std::optional<uint64_t> FileTree::ProcfsEntryCount(std::string_view relative) const {
  const std::string path = PathOf(relative).string();
  struct statfs fs {};
  struct stat st {};
  if (::statfs(path.c_str(), &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) return std::nullopt;
  if (::stat(path.c_str(), &st) != 0 || st.st_size <= 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

Result<std::vector<DirectoryEntry>> FileTree::ListEntries(std::string_view relative,
                                                          bool directories_only) const {
  const std::string path = PathOf(relative).string();
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoError(errno, "cannot list directory", path);
  std::vector<DirectoryEntry> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool wanted = !directories_only || entry->d_type == DT_DIR;
    if (directories_only && entry->d_type == DT_UNKNOWN) {  // some filesystems do not say
      struct stat st {};
      wanted = ::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode);
    }
    if (wanted) names.push_back({std::string(name), static_cast<uint64_t>(entry->d_ino)});
  }
  ::closedir(dir);
  return names;
}

bool FileTree::Exists(std::string_view relative) const {
  struct stat st {};
  return ::stat(PathOf(relative).c_str(), &st) == 0;
}

}  // namespace iowatch
