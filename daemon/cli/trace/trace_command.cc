#include "daemon/cli/trace/trace_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectors/trace/trace_json_read.h"
#include "daemon/cli/cli_output.h"
#include "daemon/cli/stop_signal.h"
#include "daemon/cli/trace/trace_output.h"
#include "daemon/cli/trace/traced_child.h"

namespace iowatch::daemon {
namespace {

// The file the traced processes append their lines to, removed after.
class LinesFile {
 public:
  LinesFile() {
    const char* tmp = std::getenv("TMPDIR");
    path_ = (std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
             "iowatch-trace.XXXXXX")
                .string();
    const int fd = mkstemp(path_.data());
    if (fd < 0) {
      error_ = errno;
      path_.clear();
    } else {
      close(fd);
    }
  }
  ~LinesFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  LinesFile(const LinesFile&) = delete;
  LinesFile& operator=(const LinesFile&) = delete;
  const std::string& path() const { return path_; }
  int error() const { return error_; }

 private:
  std::string path_;
  int error_ = 0;
};

Result<std::vector<collectors::trace::ProcessTrace>> ReadLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, "cannot read the trace", path);
  std::stringstream text;
  text << in.rdbuf();
  auto lines = collectors::trace::ParseTraceJsonLines(text.str(), path);
  for (const Error& bad : lines.bad_lines) (void)ReportError("trace", bad);  // and go on
  std::ranges::sort(lines.processes, {}, &collectors::trace::ProcessTrace::pid);
  return std::move(lines.processes);
}

Status WriteReport(const TraceOptions& o, const std::string& text) {
  if (o.output_file.empty()) {
    const size_t n = std::fwrite(text.data(), 1, text.size(), stderr);
    if (std::fflush(stderr) != 0 || n != text.size()) {
      return ErrnoError(errno, "cannot write the report", "standard error");
    }
    return {};
  }
  std::ofstream out(o.output_file, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return ErrnoError(errno, "cannot write the report", o.output_file);
  return {};
}

}  // namespace

int RunTrace(const std::vector<std::string>& args) {
  auto options = ParseTraceArgs(args);
  if (!options) return ReportError("trace", options.error());
  if (options->help) {
    if (Status w = WriteStdout(TraceUsage()); !w) return ReportError("trace", w.error());
    return 0;
  }
  auto library = FindTraceLibrary(options->library);
  if (!library) return ReportError("trace", library.error());
  LinesFile lines;
  if (lines.path().empty()) {
    return ReportError("trace",
                       ErrnoError(lines.error(), "cannot make the trace file", "/tmp").error());
  }
  TraceRun run;
  run.command = options->command;
  auto status = RunTracedCommand(options->command, *library, lines.path(), options->time_calls);
  if (!status) return ReportError("trace", status.error());
  run.exit_status = *status;
  auto processes = ReadLines(lines.path());
  if (!processes) return ReportError("trace", processes.error());
  run.processes = std::move(*processes);
  run.what_if = options->what_if;
  run.what_if_settings = WhatIfSettingsOf(*options);
  bool what_if_failed = false;
  if (options->what_if) {
    std::vector<collectors::trace::TracedFile> files = FilesAcrossProcesses(run.processes);
    std::erase_if(files, [](const auto& f) { return f.path == collectors::trace::kOtherFiles; });
    run.what_if_files = RunWhatIfs(files, *options, &StopOnSignals());
    what_if_failed = std::ranges::any_of(run.what_if_files, [](const WhatIfOutcome& f) {
      return !f.skipped.empty() && !f.steps.empty();  // started and failed
    });
  }
  const std::string report = options->json ? TraceJson(run) : TraceText(run);
  if (Status w = WriteReport(*options, report); !w) return ReportError("trace", w.error());
  if (run.exit_status == 0 && what_if_failed) return 2;
  return run.exit_status;
}

}  // namespace iowatch::daemon
