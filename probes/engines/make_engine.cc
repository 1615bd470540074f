// The explicit list of engines (no static registration): adding an engine
// means adding a case here and to EngineKind.
#include <memory>

#include "probes/engines/engine.h"
#include "probes/engines/null_engine.h"
#include "probes/engines/psync_engine.h"
#include "probes/engines/uring_engine.h"

namespace iowatch::probes {

std::unique_ptr<ProbeEngine> MakeEngine(EngineKind kind, const IoUringOptions& uring) {
  switch (kind) {
    case EngineKind::kIoUring:
      return std::make_unique<UringEngine>(uring);
    case EngineKind::kPsync:
      return std::make_unique<PsyncEngine>();
    case EngineKind::kNull:
      return std::make_unique<NullEngine>();
  }
  return nullptr;
}

}  // namespace iowatch::probes
