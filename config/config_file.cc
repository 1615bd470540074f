// LoadConfigFile: the file-system half of loading (reading, resolving
// relative paths); the YAML half is config_loader.cc.
#include <fcntl.h>
#include <unistd.h>

#include "config/config.h"

namespace iowatch::config {
namespace {

Result<std::string> ReadWholeFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot read config file", path.string());
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;  // EISDIR for a directory
      ::close(fd);
      return ErrnoError(err, "cannot read config file", path.string());
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

void ResolveAgainst(const std::filesystem::path& dir, std::string& path) {
  if (dir.empty() || path.empty() || std::filesystem::path(path).is_absolute()) return;
  path = (dir / path).lexically_normal().string();
}

}  // namespace

Result<Config> LoadConfigFile(const std::filesystem::path& path) {
  const auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  auto config = ParseConfig(*text, path.string());
  if (!config) return config;
  const std::filesystem::path dir = path.parent_path();
  for (std::string* p : {&config->procfs, &config->sysfs, &config->state_dir,
                         &config->web.tls_cert_file, &config->web.tls_key_file}) {
    ResolveAgainst(dir, *p);
  }
  return config;
}

}  // namespace iowatch::config
