#include "cli/trace/scratch_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>

namespace iowatch::daemon {
namespace {

std::string RandomName() {
  static constexpr char kLetters[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device entropy;
  std::string name = ".iowatch-what-if.";
  for (int i = 0; i < 6; ++i) name += kLetters[entropy() % (sizeof kLetters - 1)];
  return name;
}

// Every entry of the open directory `dir` unlinked through it (the probe
// makes files only).
void RemoveEntries(int dir) {
  const int copy = fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return;
  DIR* listing = fdopendir(copy);
  if (listing == nullptr) {
    close(copy);
    return;
  }
  while (const dirent* entry = readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") (void)unlinkat(dir, entry->d_name, 0);
  }
  closedir(listing);
}

}  // namespace

Result<ScratchDirectory> ScratchDirectory::Make(const std::string& parent) {
  probes::UniqueFd parent_fd(probes::OpenNoEintr(parent, O_RDONLY | O_DIRECTORY));
  if (parent_fd.get() < 0) {
    return ErrnoError(errno, "cannot open the directory for the what-if's scratch directory",
                      parent);
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = RandomName();
    if (mkdirat(parent_fd.get(), name.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      return ErrnoError(
          errno, "cannot make a scratch directory for the what-if (give --scratch-dir)", parent);
    }
    probes::UniqueFd dir(probes::OpenAtNoFollow(parent_fd.get(), name, O_RDONLY | O_DIRECTORY));
    if (dir.get() < 0) {
      const int error = errno;  // replaced between mkdirat and openat: not ours to remove
      return ErrnoError(error, "cannot open the scratch directory it made",
                        (std::filesystem::path(parent) / name).string());
    }
    return ScratchDirectory(std::move(parent_fd), std::move(dir), std::move(name));
  }
  return MakeError(ErrorCode::kIo, "no free name for a scratch directory after 100 tries", parent);
}

ScratchDirectory::ScratchDirectory(probes::UniqueFd parent, probes::UniqueFd dir, std::string name)
    : parent_(std::move(parent)),
      dir_(std::move(dir)),
      name_(std::move(name)),
      path_("/proc/self/fd/" + std::to_string(dir_.get())) {}

ScratchDirectory::~ScratchDirectory() {
  if (dir_.get() < 0) return;  // moved from
  RemoveEntries(dir_.get());
  struct stat ours {
  }, named{};
  if (fstat(dir_.get(), &ours) == 0 &&
      fstatat(parent_.get(), name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      ours.st_dev == named.st_dev && ours.st_ino == named.st_ino) {
    (void)unlinkat(parent_.get(), name_.c_str(), AT_REMOVEDIR);
  }
}

}  // namespace iowatch::daemon
