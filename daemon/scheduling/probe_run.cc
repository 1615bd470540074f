#include "daemon/scheduling/probe_run.h"

#include "common/enum_names.h"

namespace iowatch::daemon {

constexpr EnumName<RunResult> kRunResultNames[] = {{RunResult::kOk, "ok"},
                                                   {RunResult::kError, "error"},
                                                   {RunResult::kSkipped, "skipped"},
                                                   {RunResult::kCancelled, "cancelled"},
                                                   {RunResult::kContended, "contended"}};
static_assert(NamesEveryValue<kRunResultNames>());

std::string_view ToString(RunResult result) { return NameIn<RunResult>(kRunResultNames, result); }

}  // namespace iowatch::daemon
