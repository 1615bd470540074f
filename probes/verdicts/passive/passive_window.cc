#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::probes {

std::string_view ToString(PassiveSource source) {
  return source == PassiveSource::kDevice ? "device" : "diskstats";
}

}  // namespace iowatch::probes
