// MountTableWatch: whether a mount table has to be read again. Generating
// /proc/self/mountinfo costs the kernel about 5 µs a mount (0.15-0.2 s for
// 36,000 container mounts here), every sample, for a table that changes
// rarely. The kernel says when it changes: poll(2) on an open mountinfo
// reports POLLPRI once a mount, unmount, move or remount happened in its
// namespace since the last poll. What no event announces: a superblock
// turned read-only by the filesystem itself (ext4's errors=remount-ro, a
// btrfs abort); the caller reads again when its error counters move, and
// every kMaxAge whatever happens.
// Not a procfs file (an injected fixture root): changed every time.
// Thread-safety: one caller.
#pragma once

#include <chrono>
#include <filesystem>

namespace iowatch::collectors {

class MountTableWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kMaxAge = std::chrono::seconds(10);

  MountTableWatch() = default;
  ~MountTableWatch();
  MountTableWatch(const MountTableWatch&) = delete;
  MountTableWatch& operator=(const MountTableWatch&) = delete;

  // Whether `path`'s table may differ from the one read at the last call
  // that returned true: first call, another path, an event, kMaxAge past,
  // or no event to rely on (not procfs, cannot open). A caller that gets
  // true reads the table after this call (a change in between is in what
  // it reads, and is reported again at most once).
  bool Changed(const std::filesystem::path& path, Clock::time_point now = Clock::now());

 private:
  // Opens `path` (closing what was open); false when it cannot be watched.
  bool Open(const std::filesystem::path& path);
  void Close();

  std::filesystem::path path_;
  int fd_ = -1;  // open on path_ while it can be watched
  Clock::time_point read_at_{};
};

}  // namespace iowatch::collectors
