#include "daemon/sources/registry.h"

#include "daemon/sources/block_io/block_io_source.h"
#include "daemon/sources/cgroup/cgroup_source.h"
#include "daemon/sources/disk/disk_source.h"
#include "daemon/sources/filesystem/filesystem_source.h"
#include "daemon/sources/kmsg/kmsg_source.h"
#include "daemon/sources/md/md_source.h"
#include "daemon/sources/nvme/nvme_source.h"
#include "daemon/sources/pressure/pressure_source.h"
#include "daemon/sources/process_io/process_source.h"
#include "daemon/sources/scsi/scsi_source.h"
#include "daemon/sources/smart/smart_source.h"
#include "daemon/sources/thin_pool/thin_pool_source.h"
#include "daemon/sources/udev/udev_source.h"
#include "daemon/sources/vm/vm_source.h"
#include "daemon/sources/zfs/zfs_source.h"

namespace iowatch::daemon {

std::span<const SourceDescriptor> RegisteredSources() {
  // One line per source (docs/development.md, "Adding a source").
  static const SourceDescriptor kSources[] = {
      DiskSourceDescriptor(),        //
      CgroupSourceDescriptor(),      //
      VmSourceDescriptor(),          //
      PressureSourceDescriptor(),    //
      ProcessSourceDescriptor(),     //
      BlockIoSourceDescriptor(),     //
      FilesystemSourceDescriptor(),  //
      KmsgSourceDescriptor(),        //
      SmartSourceDescriptor(),       //
      ScsiSourceDescriptor(),        //
      MdSourceDescriptor(),          //
      NvmeSourceDescriptor(),        //
      ZfsSourceDescriptor(),         //
      ThinPoolSourceDescriptor(),    //
      UdevSourceDescriptor(),        //
  };
  return kSources;
}

std::vector<config::Setting> RegisteredSettings() {
  std::vector<config::Setting> settings;
  for (const SourceDescriptor& source : RegisteredSources()) {
    settings.insert(settings.end(), source.settings.begin(), source.settings.end());
  }
  return settings;
}

}  // namespace iowatch::daemon
