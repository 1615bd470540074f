// SamplerOptions for a test's Sampler: the config's defaults (each source's
// settings at their rows' defaults), but with the sources that reach
// outside the test's fixture tree switched off: the host's kernel log and
// smartctl on the host's disks; dmsetup and udev's database pointed at none
// (the host's would describe other devices than the fixture's). A test of
// one of them switches it on.
#pragma once

#include "daemon/sampling/source_context.h"
#include "daemon/sources/kmsg/kmsg_source.h"
#include "daemon/sources/smart/smart_source.h"
#include "daemon/sources/thin_pool/thin_pool_source.h"

namespace iowatch::daemon {

inline SamplerOptions TestSamplerOptions() {
  SamplerOptions options;
  options.settings.Set(kKmsgEnabled, false);
  options.settings.Set(kSmartEnabled, false);
  // Never the host's dmsetup: the fixture trees' dm devices are not its.
  options.settings.Set(kThinPoolDmsetup, std::string("/nonexistent/dmsetup"));
  options.udev_data = "/nonexistent/udev/data";
  return options;
}

}  // namespace iowatch::daemon
