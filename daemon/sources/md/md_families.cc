// The md arrays' families: node_exporter's node_md_* under iowatch_md_*, with
// the same labels and values, and the sync's progress, mismatches and the
// array's description beyond them.
#include <optional>

#include "collectors/md/md_sysfs.h"
#include "collectors/md/mdstat.h"
#include "daemon/sources/md/md_source.h"

namespace iowatch::daemon {
namespace {

using collectors::MdArray;
using collectors::MdSysfsArray;
using collectors::NodeMdFigures;

size_t MdstatArrays(const Snapshot& s) { return s.md.arrays.size(); }
size_t MdSysfsArrays(const Snapshot& s) { return s.md.sysfs_arrays.size(); }

// node_exporter's per-array figures from mdstat, one family each.
constexpr FamilyRow<uint64_t NodeMdFigures::*> kMdFigureRows[] = {
    {"iowatch_md_disks_required", "gauge",
     "Disks the array's level needs: n of mdstat's [n/m] (node_exporter's node_md_disks_required).",
     &NodeMdFigures::disks_required},
    {"iowatch_md_blocks", "gauge",
     "The array's size in 1 KiB blocks, from /proc/mdstat (node_exporter's node_md_blocks).",
     &NodeMdFigures::blocks},
    {"iowatch_md_blocks_synced", "gauge",
     "1 KiB blocks synced: the sync line's done, or the array's size when no sync runs "
     "(/proc/mdstat; node_exporter's node_md_blocks_synced).",
     &NodeMdFigures::blocks_synced},
};

void MdFigure(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  w.SampleInt({{"device", array.name}},
              collectors::NodeExporterMdFigures(array).*kMdFigureRows[arg].value);
}

// node_md_state: 1 for the array's state, 0 for the four others.
void MdState(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  const NodeMdFigures figures = collectors::NodeExporterMdFigures(array);
  for (const std::string_view state : collectors::kNodeMdStates) {
    w.Sample({{"device", array.name}, {"state", state}}, figures.StateValue(state));
  }
}

void MdDisks(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  const NodeMdFigures f = collectors::NodeExporterMdFigures(array);
  w.SampleInt({{"device", array.name}, {"state", "active"}}, f.disks_active);
  w.SampleInt({{"device", array.name}, {"state", "failed"}}, f.disks_failed);
  w.SampleInt({{"device", array.name}, {"state", "spare"}}, f.disks_spare);
}

// The sync line's figures, only while one runs.
void MdSyncSpeed(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  if (array.sync) w.SampleInt({{"device", array.name}}, array.sync->speed_kib_per_s * 1024);
}

void MdSyncRemaining(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  if (array.sync) w.Sample({{"device", array.name}}, array.sync->finish_minutes * 60);
}

void MdSyncDoneRatio(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdArray& array = s.md.arrays[i];
  if (!array.sync || array.sync->total_blocks == 0) return;
  w.Sample({{"device", array.name}}, static_cast<double>(array.sync->done_blocks) /
                                         static_cast<double>(array.sync->total_blocks));
}

void MdDegraded(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdSysfsArray& array = s.md.sysfs_arrays[i];
  w.SampleInt({{"device", array.name}}, collectors::NodeExporterMdSysfsFigures(array).degraded);
}

void MdRaidDisks(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdSysfsArray& array = s.md.sysfs_arrays[i];
  const std::optional<uint64_t> disks = collectors::NodeExporterMdSysfsFigures(array).raid_disks;
  if (disks) w.SampleInt({{"device", array.name}}, *disks);
}

void MdChunkBytes(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdSysfsArray& array = s.md.sysfs_arrays[i];
  if (array.chunk_size_bytes) w.SampleInt({{"device", array.name}}, *array.chunk_size_bytes);
}

void MdMismatches(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdSysfsArray& array = s.md.sysfs_arrays[i];
  if (array.mismatch_cnt) w.SampleInt({{"device", array.name}}, *array.mismatch_cnt);
}

void MdInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const MdSysfsArray& array = s.md.sysfs_arrays[i];
  w.SampleInt({{"device", array.name},
               {"level", array.level.value_or("")},
               {"array_state", array.array_state.value_or("")},
               {"sync_action", array.sync_action.value_or("")}},
              1);
}

}  // namespace

void AddMdFamilies(TableBuilder& t) {
  t.Add("iowatch_md_state", "gauge",
        "1 for the array's state in /proc/mdstat (active, inactive, recovering, resync, check), "
        "0 for the others; all 0 while reshaping (node_exporter's node_md_state).",
        {MdstatArrays, MdState});
  t.Add("iowatch_md_disks", "gauge",
        "The array's member disks by state: active, failed (F) and spare (S) in /proc/mdstat "
        "(node_exporter's node_md_disks).",
        {MdstatArrays, MdDisks});
  AddRowFamilies(t, kMdFigureRows, MdstatArrays, MdFigure);
  t.Add("iowatch_md_sync_speed_bytes_per_second", "gauge",
        "Speed of the running resync, recovery, check, repair or reshape (/proc/mdstat speed= "
        "K/sec x 1024); no series when none runs.",
        {MdstatArrays, MdSyncSpeed});
  t.Add("iowatch_md_sync_remaining_seconds", "gauge",
        "The kernel's estimate of the time the running sync still needs (/proc/mdstat finish= "
        "minutes x 60).",
        {MdstatArrays, MdSyncRemaining});
  t.Add("iowatch_md_sync_completed_ratio", "gauge",
        "Share of the running sync done (/proc/mdstat's done/total blocks, 0..1).",
        {MdstatArrays, MdSyncDoneRatio});
  t.Add("iowatch_md_degraded", "gauge",
        "Raid disks missing or failed (<sysfs>/block/md*/md/degraded; 0 for levels without "
        "redundancy, as node_exporter's node_md_degraded).",
        {MdSysfsArrays, MdDegraded});
  t.Add(
      "iowatch_md_raid_disks", "gauge",
      "Disks the array has (<sysfs>/block/md*/md/raid_disks; node_exporter's node_md_raid_disks).",
      {MdSysfsArrays, MdRaidDisks});
  t.Add("iowatch_md_chunk_bytes", "gauge",
        "The array's chunk size in bytes (<sysfs>/block/md*/md/chunk_size); no series for levels "
        "without chunks.",
        {MdSysfsArrays, MdChunkBytes});
  t.Add("iowatch_md_mismatches", "gauge",
        "512-byte sectors the last check or repair found differing between copies or parity, as "
        "the kernel counts them (<sysfs>/block/md*/md/mismatch_cnt).",
        {MdSysfsArrays, MdMismatches});
  t.Add("iowatch_md_info", "gauge",
        "1 per array, its level, array_state and sync_action from <sysfs>/block/md*/md/ as labels "
        "(\"\" when absent).",
        {MdSysfsArrays, MdInfo});
}

}  // namespace iowatch::daemon
