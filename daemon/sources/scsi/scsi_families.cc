// The SCSI midlayer's command counters, per SCSI disk.
#include <optional>

#include "daemon/sources/scsi/scsi_source.h"

namespace iowatch::daemon {
namespace {

size_t ScsiDisks(const Snapshot& s) { return s.scsi.devices.size(); }

template <uint64_t ScsiSeries::*kField>
void ScsiCounter(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ScsiSeries& d = s.scsi.devices[i];
  w.SampleInt({{"device", d.device}}, d.*kField);
}

void ScsiTimeouts(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ScsiSeries& d = s.scsi.devices[i];
  if (d.timeouts) w.SampleInt({{"device", d.device}}, *d.timeouts);
}

}  // namespace

void AddScsiFamilies(TableBuilder& t) {
  t.Add("iowatch_scsi_commands_total", "counter",
        "Commands the SCSI midlayer sent to the disk's driver (device/iorequest_cnt), since the "
        "device was attached; 64-bit past the kernel's 32-bit wrap.",
        {ScsiDisks, ScsiCounter<&ScsiSeries::requests>});
  t.Add("iowatch_scsi_commands_done_total", "counter",
        "Commands the disk completed (device/iodone_cnt).",
        {ScsiDisks, ScsiCounter<&ScsiSeries::done>});
  t.Add("iowatch_scsi_command_errors_total", "counter",
        "Commands completed with an error result (device/ioerr_cnt): medium and transport "
        "errors, and benign conditions such as the UNIT ATTENTION after a reset.",
        {ScsiDisks, ScsiCounter<&ScsiSeries::errors>});
  t.Add("iowatch_scsi_command_timeouts_total", "counter",
        "Commands that timed out (device/iotmo_cnt).", {ScsiDisks, ScsiTimeouts});
}

}  // namespace iowatch::daemon
