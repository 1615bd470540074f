// The YAML config: loader and validator (anchors, aliases, deep nesting, every
// value syntax), with the registered sources' settings as serve reads it (the
// bundled seed's collectors section included). A config that parses must
// describe itself consistently: its sampling window is at least its interval,
// as the validator promises.
#include "config/config.h"
#include "daemon/sources/registry.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<iowatch::config::Setting> kSettings =
      iowatch::daemon::RegisteredSettings();
  const auto config =
      iowatch::config::ParseConfig(iowatch::fuzz::AsText(data, size), "fuzz.yaml", kSettings);
  if (config) iowatch::fuzz::Require(config->sampling.window >= config->sampling.interval);
  return 0;
}
