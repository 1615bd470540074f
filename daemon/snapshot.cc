#include "daemon/snapshot.h"

#include "daemon/metrics_renderer.h"

namespace iowatch::daemon {

const std::string& Snapshot::Rendered() const {
  std::call_once(rendered_once_, [this] { rendered_ = RenderSnapshot(*this); });
  return rendered_;
}

}  // namespace iowatch::daemon
