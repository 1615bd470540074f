#include "daemon/cli/baseline/baseline_options.h"

#include <fmt/format.h>

#include <charconv>

#include "config/config.h"
#include "probes/baseline/baseline.h"

namespace iowatch::daemon {
namespace {

constexpr std::string_view kSeeHelp = " (see `iowatch baseline --help`)";

std::unexpected<Error> UsageError(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, message + std::string(kSeeHelp));
}

Result<uint32_t> ParseRuns(std::string_view text) {
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) {
    return UsageError(
        fmt::format("--runs: expected a whole number of runs, at least 1, found \"{}\"", text));
  }
  return value;
}

bool IsDevice(std::string_view text) {
  const size_t colon = text.find(':');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return colon != std::string_view::npos && digits(text.substr(0, colon)) &&
         digits(text.substr(colon + 1));
}

}  // namespace

std::string_view BaselineActionName(BaselineAction action) {
  switch (action) {
    case BaselineAction::kHelp:
      return "help";
    case BaselineAction::kList:
      return "list";
    case BaselineAction::kShow:
      return "show";
    case BaselineAction::kCapture:
      return "capture";
    case BaselineAction::kReset:
      return "reset";
    case BaselineAction::kExport:
      return "export";
    case BaselineAction::kImport:
      return "import";
  }
  return "?";
}

std::string BaselineUsage() {
  return fmt::format(
      "Usage: iowatch baseline [--state.dir=DIR] ACTION [ARGS]\n"
      "\n"
      "Reads and edits the probe baselines in DIR/iowatch.db (DIR: {}).\n"
      "\n"
      "  list                        every baseline: job, device, params (hash of the job's\n"
      "                              parameters), runs, pinned, created, model\n"
      "  show JOB [--runs=N]         each baseline of JOB beside its last N successful runs\n"
      "                              (default {}): value, ratio to the baseline, '!' when bad\n"
      "  capture JOB [--runs=N] [--device=MAJ:MIN]\n"
      "                              rebuild JOB's baseline from its last N successful runs\n"
      "                              (default {}) and pin it\n"
      "  reset JOB                   delete JOB's baselines; the daemon learns new ones\n"
      "  export [FILE|-]             every baseline as JSON (default: stdout)\n"
      "  import FILE|-               store the baselines of a JSON export, pinned\n",
      config::Config{}.state_dir, kShowRunsDefault, probes::BaselinePolicy{}.runs);
}

Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args) {
  BaselineArgs out;
  std::vector<std::string> positional;
  bool help = false;
  bool device_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      continue;
    }
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        args.end());
      break;
    }
    if (arg == "-" || !arg.starts_with("-")) {  // "-" is stdin or stdout
      positional.push_back(arg);
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    if (name != "--state.dir" && name != "--runs" && name != "--device") {
      return UsageError(fmt::format("unknown option \"{}\"", arg));
    }
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return UsageError(fmt::format("{} needs a value", name));
    }
    if (name == "--state.dir") {
      if (value.empty()) return UsageError("--state.dir: expected a directory, found \"\"");
      out.state_dir = value;
    } else if (name == "--runs") {
      Result<uint32_t> runs = ParseRuns(value);
      if (!runs) return std::unexpected(runs.error());
      out.runs = *runs;
    } else {
      if (!IsDevice(value)) {
        return UsageError(
            fmt::format("--device: expected MAJOR:MINOR (e.g. 259:0), found \"{}\"", value));
      }
      out.device = value;
      device_given = true;
    }
  }
  if (help) return out;  // kHelp, whatever else was given
  if (positional.empty()) {
    return UsageError("expected an action: list, show, capture, reset, export or import");
  }

  struct Arity {
    BaselineAction action;
    size_t min, max;  // arguments after the action
    const char* usage;
  };
  static constexpr Arity kActions[] = {
      {BaselineAction::kList, 0, 0, "list"},
      {BaselineAction::kShow, 1, 1, "show JOB"},
      {BaselineAction::kCapture, 1, 1, "capture JOB"},
      {BaselineAction::kReset, 1, 1, "reset JOB"},
      {BaselineAction::kExport, 0, 1, "export [FILE|-]"},
      {BaselineAction::kImport, 1, 1, "import FILE|-"},
  };
  const Arity* arity = nullptr;
  for (const Arity& a : kActions) {
    if (BaselineActionName(a.action) == positional[0]) arity = &a;
  }
  if (arity == nullptr) {
    return UsageError(
        fmt::format("unknown action \"{}\": expected list, show, capture, reset, export or import",
                    positional[0]));
  }
  const size_t given = positional.size() - 1;
  if (given < arity->min || given > arity->max) {
    return UsageError(fmt::format("usage: iowatch baseline {}", arity->usage));
  }
  out.action = arity->action;
  if (out.action == BaselineAction::kShow || out.action == BaselineAction::kCapture ||
      out.action == BaselineAction::kReset) {
    out.job = positional[1];
    if (out.job.empty()) return UsageError("JOB: expected a job name, found \"\"");
  } else if (given == 1) {
    out.file = positional[1];
    if (out.file.empty()) return UsageError("FILE: expected a file name or -, found \"\"");
  }
  if (out.runs && out.action != BaselineAction::kShow && out.action != BaselineAction::kCapture) {
    return UsageError("--runs applies to show and capture only");
  }
  if (device_given && out.action != BaselineAction::kCapture) {
    return UsageError("--device applies to capture only");
  }
  return out;
}

}  // namespace iowatch::daemon
