#include "cli/vmstat/vmstat_session.h"

namespace iowatch::daemon {

VmstatSession::VmstatSession(const VmstatOptions& options, collectors::VmstatParams params,
                             uint64_t header_every, TimeFormatter now)
    : options_(options),
      params_(params),
      header_every_(header_every != 0 ? header_every : 1),
      now_(std::move(now)),
      layout_{options.wide, options.active, options.timestamp} {}

std::string VmstatSession::Header() const {
  return VmstatHeader(layout_, options_.timestamp ? now_("%Z") : "");
}

std::string VmstatSession::Timestamp() const {
  return options_.timestamp ? now_("%Y-%m-%d %H:%M:%S") : "";
}

std::string VmstatSession::Start(collectors::VmSample first) {
  std::string out = Header();
  if (!options_.skip_since_boot) {
    out += VmstatLine(layout_, collectors::ComputeVmstatSinceBoot(first, params_), Timestamp());
  }
  previous_ = std::move(first);
  return out;
}

std::string VmstatSession::Next(collectors::VmSample sample) {
  std::string out;
  // procps numbers the since-boot line 0 and repeats the header before line i
  // when i is a multiple of the header interval.
  ++lines_since_start_;
  if (!options_.one_header && lines_since_start_ % header_every_ == 0) out += Header();
  out += VmstatLine(layout_,
                    collectors::ComputeVmstatInterval(*previous_, sample, DelaySeconds(), params_),
                    Timestamp());
  previous_ = std::move(sample);
  return out;
}

std::optional<uint64_t> VmstatSession::IntervalLines() const {
  if (!options_.delay_s) return options_.skip_since_boot ? 1 : 0;
  if (!options_.count) return std::nullopt;
  const uint64_t total = *options_.count == 0 ? 1 : *options_.count;
  return options_.skip_since_boot ? total : total - 1;
}

}  // namespace iowatch::daemon
