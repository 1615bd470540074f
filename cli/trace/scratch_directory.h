// The what-if's scratch directory, made and used through descriptors only (so
// that no name on the way can be swapped under it): its parent is opened once
// (O_DIRECTORY), the directory made in it with mkdirat under a random name
// (.iowatch-what-if.XXXXXX) and opened with O_NOFOLLOW, and the probe is
// given /proc/self/fd/N: the directory itself, whatever its name comes to
// point at. Swapping the name for a symlink while the replays run leads no
// probe file elsewhere, as the probe target's own files are reached through
// their directory's descriptor (probes/target/posix_file.h). On destruction
// its entries are removed through its descriptor, then its name, if that
// still names it.
// Thread-safety: one owner.
#pragma once

#include <string>

#include "common/result.h"
#include "probes/target/posix_file.h"

namespace iowatch::daemon {

class ScratchDirectory {
 public:
  // A new directory in `parent`; errors name `parent`.
  static Result<ScratchDirectory> Make(const std::string& parent);

  ScratchDirectory(ScratchDirectory&&) noexcept = default;
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();

  // "/proc/self/fd/N": where the probe files go.
  const std::string& path() const { return path_; }
  // Its name in the parent: ".iowatch-what-if.XXXXXX".
  const std::string& name() const { return name_; }

 private:
  ScratchDirectory(probes::UniqueFd parent, probes::UniqueFd dir, std::string name);

  probes::UniqueFd parent_;
  probes::UniqueFd dir_;
  std::string name_;
  std::string path_;
};

}  // namespace iowatch::daemon
