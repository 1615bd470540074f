// NVMe controllers in sysfs: <sysfs>/class/nvme/nvme*/ (links to the
// controllers' device directories), their attributes as
// drivers/nvme/host/core.c and sysfs.c print them, and the namespaces'
// block devices beneath them (nvme0n1/). The controller's state is what an
// alert needs: a controller that is not "live" (resetting, connecting, dead,
// being deleted) does no I/O, however healthy its disk's counters looked.
// NodeExporterNvmeNamespaceFigures gives what node_exporter's nvme collector
// (prometheus/procfs v0.21.1, sysfs/class_nvme.go) exports for a namespace.
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// A namespace's block device under its controller: nvme0/nvme0n1/.
struct NvmeNamespace {
  std::string name{};  // nvme0n1
  std::string nsid{};  // "1": the digits after the last 'n', as node_exporter labels it
  // nuse: logical blocks in use, as the controller reports them.
  std::optional<uint64_t> used_blocks{};
  // size: the block layer's capacity in 512-byte sectors, whatever the
  // namespace's logical block size.
  std::optional<uint64_t> size_sectors{};
  std::optional<uint64_t> logical_block_size{};  // queue/logical_block_size, bytes
  // ana_state (optimized, non-optimized, inaccessible, persistent-loss,
  // change): only on namespaces of a controller with ANA (multipath).
  std::optional<std::string> ana_state{};
  bool operator==(const NvmeNamespace&) const = default;
};

// One controller; an attribute the kernel does not have is nullopt.
struct NvmeController {
  std::string name{};  // nvme0
  std::optional<std::string> model{};
  std::optional<std::string> serial{};
  std::optional<std::string> firmware_rev{};
  std::optional<std::string> state{};       // one of kNvmeControllerStates, or "unknown state"
  std::optional<std::string> cntlid{};      // the controller id within its subsystem
  std::vector<NvmeNamespace> namespaces{};  // by name
  bool operator==(const NvmeController&) const = default;
};

// What nvme_sysfs_show_state prints for each enum nvme_ctrl_state; a value
// it has no name for prints "unknown state".
inline constexpr std::string_view kNvmeControllerStates[] = {
    "new", "live", "resetting", "connecting", "deleting", "deleting (no IO)", "dead"};

// The controller <sysfs>/class/nvme/<name>; a controller removed while read
// is kNotFound. A numeric attribute (nuse, size, logical_block_size) that
// is not a decimal number is an error naming its path and line 1.
Result<NvmeController> ReadNvmeController(const FileTree& sysfs, std::string_view name);

// Every class/nvme/nvme<N>, by name; one removed while read is left out. No
// class/nvme (no NVMe driver loaded) is kNotFound; any other failure fails
// the whole, naming its file, as procfs's NVMeClass does.
Result<std::vector<NvmeController>> ReadNvmeControllers(const FileTree& sysfs);

// A namespace's node_nvme_namespace_* figures by procfs's rules: absent
// numbers are 0, ana_state "unknown" when absent, and both sizes are
// size x logical_block_size. The kernel's size is in 512-byte sectors, so
// on a namespace formatted with 4 KiB blocks those two are eight times its
// bytes; node_exporter's figures are reproduced as they are, for its users'
// queries to carry over.
struct NodeNvmeNamespaceFigures {
  std::string ana_state{};
  uint64_t used_bytes = 0;      // nuse x logical_block_size
  uint64_t size_bytes = 0;      // size x logical_block_size
  uint64_t capacity_bytes = 0;  // the same as size_bytes
  uint64_t logical_block_size = 0;
};
NodeNvmeNamespaceFigures NodeExporterNvmeNamespaceFigures(const NvmeNamespace& ns);

}  // namespace iowatch::collectors
