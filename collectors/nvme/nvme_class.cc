#include "collectors/nvme/nvme_class.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectors/text/sysfs_text.h"
#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

// "nvme" then digits: a controller's name (class/nvme holds nothing else on
// today's kernels; the check keeps a stray entry out of the labels).
bool IsNvmeControllerName(std::string_view name) {
  return name.starts_with("nvme") && ParseU64(name.substr(4)).has_value();
}

// "nvme<N>n<M>": a namespace's block device; the path devices of native
// multipath (nvme0c0n1) and the character devices (ng0n1) are not, as for
// procfs. Returns M.
std::optional<std::string_view> NvmeNamespaceId(std::string_view name) {
  if (!name.starts_with("nvme")) return std::nullopt;
  const size_t n = name.find('n', 4);
  if (n == std::string_view::npos || !ParseU64(name.substr(4, n - 4)) ||
      !ParseU64(name.substr(n + 1))) {
    return std::nullopt;
  }
  return name.substr(n + 1);
}

// A decimal attribute; nullopt when absent.
Result<std::optional<uint64_t>> ReadNvmeNumber(const FileTree& sysfs, const std::string& relative,
                                               std::string_view what) {
  const auto text = ReadSysfsText(sysfs, relative);
  if (!text) return ErrorOf(text);
  if (!*text) return std::nullopt;
  const auto number = ParseU64(**text);
  if (!number) {
    return std::unexpected(
        Error::Parse(fmt::format("expected a decimal number ({}), found '{}'", what, **text),
                     sysfs.PathOf(relative).string(), 1));
  }
  return number;
}

Result<NvmeNamespace> ReadNvmeNamespace(const FileTree& sysfs, const std::string& controller_dir,
                                        std::string_view name, std::string_view nsid) {
  const std::string dir = fmt::format("{}/{}", controller_dir, name);
  NvmeNamespace ns{.name = std::string(name), .nsid = std::string(nsid)};
  std::optional<Error> error;
  const bool read = TakeSysfsRead(ReadNvmeNumber(sysfs, dir + "/nuse", "logical blocks in use"),
                                  ns.used_blocks, error) &&
                    TakeSysfsRead(ReadNvmeNumber(sysfs, dir + "/size", "512-byte sectors"),
                                  ns.size_sectors, error) &&
                    TakeSysfsRead(ReadNvmeNumber(sysfs, dir + "/queue/logical_block_size", "bytes"),
                                  ns.logical_block_size, error) &&
                    TakeSysfsRead(ReadSysfsText(sysfs, dir + "/ana_state"), ns.ana_state, error);
  if (!read) return std::unexpected(*error);
  return ns;
}

Result<std::vector<NvmeNamespace>> ReadNvmeNamespaces(const FileTree& sysfs,
                                                      const std::string& controller_dir) {
  auto entries = sysfs.List(controller_dir);
  if (!entries) return ErrorOf(entries);
  std::ranges::sort(*entries);
  std::vector<NvmeNamespace> namespaces;
  for (const std::string& entry : *entries) {
    const std::optional<std::string_view> nsid = NvmeNamespaceId(entry);
    if (!nsid) continue;
    auto ns = ReadNvmeNamespace(sysfs, controller_dir, entry, *nsid);
    if (!ns && ns.error().code == ErrorCode::kNotFound) continue;  // detached while read
    if (!ns) return ErrorOf(ns);
    namespaces.push_back(std::move(*ns));
  }
  return namespaces;
}

}  // namespace

Result<NvmeController> ReadNvmeController(const FileTree& sysfs, std::string_view name) {
  const std::string dir = fmt::format("class/nvme/{}", name);
  NvmeController controller{.name = std::string(name)};
  std::optional<Error> error;
  // The namespaces first: listing the directory tells a removed controller
  // (kNotFound) from one whose attributes are merely absent.
  const bool read =
      TakeSysfsRead(ReadNvmeNamespaces(sysfs, dir), controller.namespaces, error) &&
      TakeSysfsRead(ReadSysfsText(sysfs, dir + "/model"), controller.model, error) &&
      TakeSysfsRead(ReadSysfsText(sysfs, dir + "/serial"), controller.serial, error) &&
      TakeSysfsRead(ReadSysfsText(sysfs, dir + "/firmware_rev"), controller.firmware_rev, error) &&
      TakeSysfsRead(ReadSysfsText(sysfs, dir + "/state"), controller.state, error) &&
      TakeSysfsRead(ReadSysfsText(sysfs, dir + "/cntlid"), controller.cntlid, error);
  if (!read) return std::unexpected(*error);
  return controller;
}

Result<std::vector<NvmeController>> ReadNvmeControllers(const FileTree& sysfs) {
  auto names = sysfs.List("class/nvme");
  if (!names) return ErrorOf(names);
  std::ranges::sort(*names);
  std::vector<NvmeController> controllers;
  for (const std::string& name : *names) {
    if (!IsNvmeControllerName(name)) continue;
    auto controller = ReadNvmeController(sysfs, name);
    if (!controller && controller.error().code == ErrorCode::kNotFound) continue;  // removed
    if (!controller) return ErrorOf(controller);
    controllers.push_back(std::move(*controller));
  }
  return controllers;
}

NodeNvmeNamespaceFigures NodeExporterNvmeNamespaceFigures(const NvmeNamespace& ns) {
  const uint64_t block = ns.logical_block_size.value_or(0);
  const uint64_t size = ns.size_sectors.value_or(0) * block;
  return {.ana_state = ns.ana_state.value_or("unknown"),
          .used_bytes = ns.used_blocks.value_or(0) * block,
          .size_bytes = size,
          .capacity_bytes = size,
          .logical_block_size = block};
}

}  // namespace iowatch::collectors
