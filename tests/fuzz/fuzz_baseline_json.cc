// Baseline import JSON. What imports exports to text that imports again.
#include "probes/store/store_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto baselines =
      iowatch::probes::BaselinesFromJson(iowatch::fuzz::AsText(data, size), "fuzz.json");
  if (!baselines) return 0;
  const std::string json = iowatch::probes::BaselinesToJson(*baselines);
  iowatch::fuzz::Require(iowatch::probes::BaselinesFromJson(json, "again.json").has_value());
  return 0;
}
