#include "daemon/scheduling/probe_run.h"

namespace iowatch::daemon {

std::string_view ToString(RunResult result) {
  switch (result) {
    case RunResult::kOk:
      return "ok";
    case RunResult::kError:
      return "error";
    case RunResult::kSkipped:
      return "skipped";
    case RunResult::kCancelled:
      return "cancelled";
    case RunResult::kContended:
      return "contended";
  }
  return "?";
}

}  // namespace iowatch::daemon
