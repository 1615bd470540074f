// Device numbers the scheduling tests share.
#pragma once

#include "daemon/scheduling/device_busy.h"

namespace iowatch::daemon::testing {

inline const DeviceId kSda = MakeDeviceId(8, 0);
inline const DeviceId kNvme = MakeDeviceId(259, 1);

}  // namespace iowatch::daemon::testing
