#include "advice/fs_stripe_hints.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace iowatch::advice {
namespace {

uint64_t Little(std::span<const uint8_t> b, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = bytes; i-- > 0;) v = (v << 8) | b[at + i];
  return v;
}

uint64_t Big(std::span<const uint8_t> b, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = (v << 8) | b[at + i];
  return v;
}

constexpr size_t kExt4Super = 1024;

std::optional<FsStripeHints> Ext4(std::span<const uint8_t> head) {
  if (head.size() < kExt4Super + 0x174 || Little(head, kExt4Super + 0x38, 2) != 0xEF53) {
    return std::nullopt;
  }
  const uint64_t log = Little(head, kExt4Super + 0x18, 4);
  if (log > 6) return std::nullopt;  // 1 KiB << 6 = 64 KiB, ext4's largest block
  const uint64_t block = uint64_t{1024} << log;
  return FsStripeHints{"ext4", block, Little(head, kExt4Super + 0x164, 2) * block,
                       Little(head, kExt4Super + 0x170, 4) * block};
}

std::optional<FsStripeHints> Xfs(std::span<const uint8_t> head) {
  if (head.size() < 192 || Big(head, 0, 4) != 0x58465342) return std::nullopt;  // "XFSB"
  const uint64_t block = Big(head, 4, 4);
  if (block < 512 || block > 65536) return std::nullopt;
  return FsStripeHints{"xfs", block, Big(head, 184, 4) * block, Big(head, 188, 4) * block};
}

}  // namespace

std::optional<FsStripeHints> ParseFsStripeHints(std::span<const uint8_t> head) {
  if (auto xfs = Xfs(head)) return xfs;
  return Ext4(head);
}

Result<std::optional<FsStripeHints>> ReadFsStripeHints(const std::string& device) {
  const int fd = open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open to read its superblock", device);
  std::vector<uint8_t> head(kSuperblockBytes);
  size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return ErrnoError(err, "cannot read its superblock", device);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  head.resize(got);
  return ParseFsStripeHints(head);
}

}  // namespace iowatch::advice
