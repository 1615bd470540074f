#include "common/whole_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace iowatch {
namespace {

Status WriteTo(const std::string& path, std::string_view text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return ErrnoError(errno, "cannot create", path);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  if (std::fclose(file) != 0 || !written) {
    return ErrnoError(written ? errno : write_errno, "cannot write", path);
  }
  return {};
}

}  // namespace

Status WriteWholeFile(const std::string& path, std::string_view text) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) return WriteTo(path, text);
  const std::string temporary = path + ".tmp";
  // The clean-ups' own failures would hide the error that matters.
  if (Status written = WriteTo(temporary, text); !written) {
    (void)std::remove(temporary.c_str());
    return written;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    (void)std::remove(temporary.c_str());
    return ErrnoError(err, "cannot rename " + temporary + " to", path);
  }
  return {};
}

}  // namespace iowatch
