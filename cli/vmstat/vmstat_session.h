// VmstatSession: the output of one `iowatch vmstat` run as a function of its
// samples — headers (repeated every `header_every` lines unless -n), the
// since-boot line unless -y, then one line per interval. No I/O and no clock
// of its own, so tests drive it with fixture samples.
// Thread-safety: one session per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cli/vmstat/vmstat_format.h"
#include "cli/vmstat/vmstat_options.h"
#include "collectors/vm/vmstat.h"

namespace iowatch::daemon {

class VmstatSession {
 public:
  using TimeFormatter = std::function<std::string(const char* strftime_format)>;

  VmstatSession(const VmstatOptions& options, collectors::VmstatParams params,
                uint64_t header_every, TimeFormatter now);

  std::string Start(collectors::VmSample first);
  std::string Next(collectors::VmSample sample);

  // How many Next() calls the options ask for; none means forever.
  std::optional<uint64_t> IntervalLines() const;
  // The delay between samples in seconds (1 for -y without a delay, as procps).
  uint64_t DelaySeconds() const { return options_.delay_s.value_or(1); }

 private:
  std::string Header() const;
  std::string Timestamp() const;

  VmstatOptions options_;
  collectors::VmstatParams params_;
  uint64_t header_every_;
  TimeFormatter now_;
  VmstatLayout layout_;
  std::optional<collectors::VmSample> previous_;
  uint64_t lines_since_start_ = 0;
};

}  // namespace iowatch::daemon
