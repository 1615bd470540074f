// /proc/uptime.
#include "collectors/vm/uptime.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)iowatch::collectors::ParseUptimeCentiseconds(iowatch::fuzz::AsText(data, size), "uptime");
  return 0;
}
