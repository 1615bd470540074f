// fio job options, one "name=value" per line (sizes, durations, percentages,
// lists). A job that parses prints back to options that parse to the same job.
#include <string>
#include <vector>

#include "probes/spec/job_spec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<iowatch::probes::JobOption> options;
  std::string_view text = iowatch::fuzz::AsText(data, size);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    const size_t eq = line.find('=');
    options.push_back({std::string(line.substr(0, eq)), eq == std::string_view::npos
                                                            ? std::string()
                                                            : std::string(line.substr(eq + 1))});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  const auto spec = iowatch::probes::ParseJobOptions(options);
  if (!spec) return 0;
  const auto again = iowatch::probes::ParseJobOptions(iowatch::probes::ToJobOptions(*spec));
  iowatch::fuzz::Require(again.has_value() && *again == *spec);
  return 0;
}
