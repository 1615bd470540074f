// The command line of `iowatch baseline` (see baseline_command.h for what
// each action does): an action and its arguments, with --state.dir, --runs and
// --device anywhere after "baseline", as "--name=value" or "--name value".
// "-" is an argument (stdin or stdout), not an option; "--" ends the options.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

enum class BaselineAction { kHelp, kList, kShow, kCapture, kReset, kExport, kImport };

inline constexpr uint32_t kShowRunsDefault = 10;

struct BaselineArgs {
  BaselineAction action = BaselineAction::kHelp;
  std::string state_dir;         // config::Config's default when not given
  std::string job;               // show, capture, reset
  std::string file;              // export: "" or "-" is stdout; import: "-" is stdin
  std::optional<uint32_t> runs;  // show, capture (>= 1)
  std::string device;            // capture: "major:minor", "" for the latest run's
};

// `args` excludes "baseline". Errors name the argument and what is accepted.
Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args);
std::string BaselineUsage();
std::string_view BaselineActionName(BaselineAction action);

}  // namespace iowatch::daemon
