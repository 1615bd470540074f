// The kernel log's block I/O errors, by device, op and kind; filesystem
// shutdowns; SCSI sense reports.
#include <algorithm>

#include "daemon/sources/kmsg/kmsg_source.h"

namespace iowatch::daemon {
namespace {

size_t IoErrors(const Snapshot& s) { return s.kmsg.errors.size(); }
size_t Shutdowns(const Snapshot& s) { return s.kmsg.shutdowns.size(); }

void Shutdown(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const FilesystemShutdownSeries& e = s.kmsg.shutdowns[i];
  w.SampleInt({{"device", e.device}, {"fstype", e.fstype}}, e.count);
}

size_t Senses(const Snapshot& s) { return s.kmsg.senses.size(); }

void Sense(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ScsiSenseSeries& e = s.kmsg.senses[i];
  w.SampleInt({{"device", e.device}, {"sense_key", e.sense_key}}, e.count);
}

constexpr char kKmsgCollector[] = "kmsg";

template <bool kBuffer>
void IoError(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const IoErrorSeries& e = s.kmsg.errors[i];
  if (e.buffer != kBuffer) return;
  if (kBuffer) {
    w.SampleInt({{"device", e.device}, {"op", e.op}}, e.count);
  } else {
    w.SampleInt({{"device", e.device}, {"error", e.error}, {"op", e.op}}, e.count);
  }
}

template <uint64_t KmsgSnapshot::*kField>
void KmsgScalar(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.kmsg.*kField);
}

}  // namespace

void AddKmsgFamilies(TableBuilder& t) {
  t.Add("iowatch_kernel_io_errors_total", "counter",
        "Block requests the kernel log reports failed (\"<error> error, dev <device>, sector ... "
        "op ...\"), by device, op and error kind, since boot. The kernel rate-limits these "
        "lines: a storm counts fewer (iowatch_kernel_io_errors_suppressed_total).",
        {IoErrors, IoError<false>});
  t.Add("iowatch_kernel_buffer_io_errors_total", "counter",
        "The page cache's \"Buffer I/O error on dev <device>\" lines, by op, since boot: "
        "consequences of the request errors in iowatch_kernel_io_errors_total, not added to them.",
        {IoErrors, IoError<true>});
  t.Add("iowatch_kernel_filesystem_shutdowns_total", "counter",
        "Filesystems the kernel log says were shut down (XFS \"… Shutting down filesystem\", "
        "ext4 \"shut down requested\"), by device and type, since boot: every operation on "
        "them fails from then on, while statfs still answers and the mount still reads rw.",
        {Shutdowns, Shutdown});
  t.Add("iowatch_kernel_scsi_sense_total", "counter",
        "SCSI commands the kernel log says ended with sense data (\"[<device>] ... Sense Key : "
        "<key> [current]\"), by disk and sense key as the kernel names it (Medium Error, "
        "Hardware Error, Aborted Command, Not Ready, ...), since boot: what kind of failure "
        "lies behind a request error.",
        {Senses, Sense});
  t.Add("iowatch_kernel_log_lost_records_total", "counter",
        "Kernel log records overwritten before iowatch read them (a sequence gap), since start.",
        {IfCollectorRan<kKmsgCollector>, KmsgScalar<&KmsgSnapshot::lost_records>});
  t.Add("iowatch_kernel_io_errors_suppressed_total", "counter",
        "Request error lines the kernel's rate limit held back (\"blk_print_req_error: N "
        "callbacks suppressed\", logged with the next line that passes), all devices, since "
        "boot: iowatch_kernel_io_errors_total plus this bounds the errors logged.",
        {IfCollectorRan<kKmsgCollector>, KmsgScalar<&KmsgSnapshot::suppressed_requests>});
  t.Add("iowatch_kernel_buffer_io_errors_suppressed_total", "counter",
        "\"Buffer I/O error\" lines the kernel's rate limit held back, all devices, since boot.",
        {IfCollectorRan<kKmsgCollector>, KmsgScalar<&KmsgSnapshot::suppressed_buffers>});
}

}  // namespace iowatch::daemon
