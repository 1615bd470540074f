#include "collectors/disk/disk_sample.h"

#include "collectors/vm/uptime.h"

namespace iowatch::collectors {

const DiskStat* DiskSample::Find(std::string_view name) const {
  for (const DiskStat& disk : diskstats.disks) {
    if (disk.name == name) return &disk;
  }
  return nullptr;
}

Result<DiskSample> ReadDiskSample(const FileTree& procfs, UptimeNeed uptime_need) {
  auto uptime = ReadUptimeCentiseconds(procfs);
  if (!uptime && uptime_need == UptimeNeed::kRequired) return ErrorOf(uptime);
  auto text = procfs.Read("diskstats", kMaxDiskstatsBytes);
  if (!text) return ErrorOf(text);
  DiskSample sample;
  if (uptime) {
    sample.uptime_cs = *uptime;
  } else {
    sample.uptime_error = uptime.error();
  }
  sample.diskstats = ParseDiskstats(*text, procfs.PathOf("diskstats").string());
  return sample;
}

}  // namespace iowatch::collectors
