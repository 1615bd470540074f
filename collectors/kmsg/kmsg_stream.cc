#include "collectors/kmsg/kmsg_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace iowatch::collectors {
namespace {

// A record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a smaller buffer gets EINVAL.
constexpr size_t kRecordBytes = 8192;

class KmsgDevice final : public KmsgStream {
 public:
  KmsgDevice(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~KmsgDevice() override { ::close(fd_); }
  KmsgDevice(const KmsgDevice&) = delete;
  KmsgDevice& operator=(const KmsgDevice&) = delete;

  Result<Read> Next() override {
    char buffer[kRecordBytes];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n >= 0) return Read{std::string(buffer, static_cast<size_t>(n)), false};
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return Read{};
      if (errno == EPIPE) return Read{std::nullopt, true};
      return ErrnoError(errno, "cannot read the kernel log", path_);
    }
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<KmsgStream>> OpenKmsg(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open the kernel log", path);
  return std::unique_ptr<KmsgStream>(std::make_unique<KmsgDevice>(fd, path));
}

}  // namespace iowatch::collectors
