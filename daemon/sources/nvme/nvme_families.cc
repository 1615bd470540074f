// The NVMe controllers' families: node_exporter's node_nvme_* under
// iowatch_nvme_*, with the same labels and values, and the controller's state
// as one series per state, which an alert can compare with 1.
#include <algorithm>
#include <string>

#include "collectors/nvme/nvme_class.h"
#include "daemon/sources/nvme/nvme_source.h"

namespace iowatch::daemon {
namespace {

using collectors::NodeNvmeNamespaceFigures;
using collectors::NvmeController;
using collectors::NvmeNamespace;

size_t NvmeControllers(const Snapshot& s) { return s.nvme.controllers.size(); }

// node_exporter's per-namespace figures, one family each.
constexpr FamilyRow<uint64_t NodeNvmeNamespaceFigures::*> kNvmeNamespaceRows[] = {
    {"iowatch_nvme_namespace_capacity_bytes", "gauge",
     "The namespace's size x its logical block size, as node_exporter computes "
     "node_nvme_namespace_capacity_bytes (the kernel's size is in 512-byte sectors).",
     &NodeNvmeNamespaceFigures::capacity_bytes},
    {"iowatch_nvme_namespace_size_bytes", "gauge",
     "The namespace's size x its logical block size, as node_exporter computes "
     "node_nvme_namespace_size_bytes (the kernel's size is in 512-byte sectors).",
     &NodeNvmeNamespaceFigures::size_bytes},
    {"iowatch_nvme_namespace_used_bytes", "gauge",
     "Logical blocks in use (nuse) x the logical block size (node_exporter's "
     "node_nvme_namespace_used_bytes).",
     &NodeNvmeNamespaceFigures::used_bytes},
    {"iowatch_nvme_namespace_logical_block_size_bytes", "gauge",
     "The namespace's logical block size, queue/logical_block_size (node_exporter's "
     "node_nvme_namespace_logical_block_size_bytes).",
     &NodeNvmeNamespaceFigures::logical_block_size},
};

void NvmeNamespaceFigure(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const NvmeController& controller = s.nvme.controllers[i];
  for (const NvmeNamespace& ns : controller.namespaces) {
    w.SampleInt({{"device", controller.name}, {"nsid", ns.nsid}},
                collectors::NodeExporterNvmeNamespaceFigures(ns).*kNvmeNamespaceRows[arg].value);
  }
}

void NvmeNamespaceInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const NvmeController& controller = s.nvme.controllers[i];
  for (const NvmeNamespace& ns : controller.namespaces) {
    const std::string ana_state = collectors::NodeExporterNvmeNamespaceFigures(ns).ana_state;
    w.SampleInt({{"device", controller.name}, {"nsid", ns.nsid}, {"ana_state", ana_state}}, 1);
  }
}

void NvmeInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const NvmeController& c = s.nvme.controllers[i];
  w.SampleInt({{"device", c.name},
               {"firmware_revision", c.firmware_rev.value_or("")},
               {"model", c.model.value_or("")},
               {"serial", c.serial.value_or("")},
               {"state", c.state.value_or("")},
               {"cntlid", c.cntlid.value_or("")}},
              1);
}

// 1 for the controller's state, 0 for the kernel's other states; a state
// the list does not have ("unknown state", a newer kernel's) is one more
// series at 1, so "not live" still reads state="live" == 0.
void NvmeControllerState(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const NvmeController& c = s.nvme.controllers[i];
  if (!c.state) return;
  for (const std::string_view state : collectors::kNvmeControllerStates) {
    w.SampleInt({{"device", c.name}, {"state", state}}, *c.state == state ? 1 : 0);
  }
  if (std::ranges::find(collectors::kNvmeControllerStates, *c.state) ==
      std::end(collectors::kNvmeControllerStates)) {
    w.SampleInt({{"device", c.name}, {"state", *c.state}}, 1);
  }
}

}  // namespace

void AddNvmeFamilies(TableBuilder& t) {
  t.Add("iowatch_nvme_info", "gauge",
        "1 per NVMe controller in <sysfs>/class/nvme/, its firmware_rev, model, serial, state and "
        "cntlid as labels (node_exporter's node_nvme_info).",
        {NvmeControllers, NvmeInfo});
  t.Add("iowatch_nvme_controller_state", "gauge",
        "1 for the controller's state (<sysfs>/class/nvme/*/state: new, live, resetting, "
        "connecting, deleting, deleting (no IO), dead), 0 for the others.",
        {NvmeControllers, NvmeControllerState});
  t.Add("iowatch_nvme_namespace_info", "gauge",
        "1 per namespace of a controller, its ANA state as a label (\"unknown\" without ANA; "
        "node_exporter's node_nvme_namespace_info).",
        {NvmeControllers, NvmeNamespaceInfo});
  AddRowFamilies(t, kNvmeNamespaceRows, NvmeControllers, NvmeNamespaceFigure);
}

}  // namespace iowatch::daemon
