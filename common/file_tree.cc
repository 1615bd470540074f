#include "common/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iowatch {

Result<std::string> ReadFile(const std::filesystem::path& path, const ReadFileOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, std::string(options.open_error), path.string());
  std::string content;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;  // EISDIR for a directory
      ::close(fd);
      return ErrnoError(err, std::string(options.read_error), path.string());
    }
    if (content.size() + static_cast<size_t>(n) > options.max_bytes) {
      ::close(fd);
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: longer than {} bytes", options.read_error, options.max_bytes),
          path.string());
    }
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

Result<std::string> FileTree::Read(std::string_view relative) const {
  return ReadFile(PathOf(relative));
}

Result<std::vector<std::string>> FileTree::List(std::string_view relative) const {
  const std::string path = PathOf(relative).string();
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoError(errno, "cannot list directory", path);
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

bool FileTree::Exists(std::string_view relative) const {
  struct stat st {};
  return ::stat(PathOf(relative).c_str(), &st) == 0;
}

}  // namespace iowatch
