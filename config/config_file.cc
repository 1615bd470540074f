// LoadConfigFile: the file-system half of loading (reading, resolving
// relative paths); the YAML half is config_loader.cc.
#include "common/file_tree.h"
#include "config/config.h"

namespace iowatch::config {
namespace {

void ResolveAgainst(const std::filesystem::path& dir, std::string& path) {
  if (dir.empty() || path.empty() || std::filesystem::path(path).is_absolute()) return;
  path = (dir / path).lexically_normal().string();
}

}  // namespace

Result<Config> LoadConfigFile(const std::filesystem::path& path,
                              std::span<const Setting> settings) {
  // A config file is a few kB; the limit keeps `check-config /dev/zero` bounded.
  const auto text = ReadFile(path, {.open_error = "cannot read config file",
                                    .read_error = "cannot read config file",
                                    .max_bytes = 4 << 20});
  if (!text) return ErrorOf(text);
  auto config = ParseConfig(*text, path.string(), settings);
  if (!config) return config;
  const std::filesystem::path dir = path.parent_path();
  for (std::string* p : {&config->procfs, &config->sysfs, &config->udev_data, &config->state_dir,
                         &config->web.tls_cert_file, &config->web.tls_key_file}) {
    ResolveAgainst(dir, *p);
  }
  return config;
}

}  // namespace iowatch::config
