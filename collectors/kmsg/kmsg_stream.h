// A reader of /dev/kmsg: one record per read(), never blocking (O_NONBLOCK:
// EAGAIN when the reader has caught up), and the kernel's word when records
// were overwritten before they were read (EPIPE: the reader then continues
// at the oldest record kept). A new reader starts at the oldest record the
// ring buffer still holds. Reading needs CAP_SYSLOG where
// kernel.dmesg_restrict is 1 (Debian's default).
// Thread-safety: one owner.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace iowatch::collectors {

class KmsgStream {
 public:
  virtual ~KmsgStream() = default;
  struct Read {
    std::optional<std::string> record;  // none: caught up (or overrun, below)
    bool overrun = false;               // records were lost before this read; the next read goes on
  };
  virtual Result<Read> Next() = 0;
};

// Opens `path` (/dev/kmsg); the error names it, with errno (EPERM: no CAP_SYSLOG).
Result<std::unique_ptr<KmsgStream>> OpenKmsg(const std::string& path);

}  // namespace iowatch::collectors
