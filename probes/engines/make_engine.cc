// The explicit list of engines (no static registration): adding an engine
// means adding a case here and to EngineKind.
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "probes/engines/aio_engine.h"
#include "probes/engines/engine.h"
#include "probes/engines/null_engine.h"
#include "probes/engines/psync_engine.h"
#include "probes/engines/uring_engine.h"

namespace iowatch::probes {

std::unexpected<Error> EngineUnavailable(std::string_view engine, std::string_view reason,
                                         int err) {
  Error error;
  error.code = ErrorCode::kUnsupported;
  error.message = fmt::format("{} is not available ({}); use --ioengine={}", engine, reason,
                              ToString(EngineKind::kPsync));
  error.os_errno = err;
  return std::unexpected<Error>(std::move(error));
}

std::unique_ptr<ProbeEngine> MakeEngine(EngineKind kind, const IoUringOptions& uring) {
  switch (kind) {
    case EngineKind::kIoUring:
      return std::make_unique<UringEngine>(uring);
    case EngineKind::kPsync:
      return std::make_unique<PsyncEngine>();
    case EngineKind::kNull:
      return std::make_unique<NullEngine>();
    case EngineKind::kLibaio:
      return std::make_unique<AioEngine>();
  }
  return nullptr;
}

std::vector<EngineKind> AsynchronousEngines() {
  std::vector<EngineKind> kinds;
  for (const EnumName<EngineKind>& engine : Engines()) {
    if (!MakeEngine(engine.value)->IsSynchronous()) kinds.push_back(engine.value);
  }
  return kinds;
}

}  // namespace iowatch::probes
