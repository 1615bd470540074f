#include "cli/trace/trace_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/shared/cli_output.h"
#include "cli/shared/stop_signal.h"
#include "cli/trace/trace_output.h"
#include "cli/trace/traced_child.h"
#include "trace/trace_json_read.h"

namespace iowatch::daemon {
namespace {

// The file the traced processes append their lines to, removed after: in
// $TMPDIR (else /tmp), absolute, so that a process that changes directory
// still writes there.
class LinesFile {
 public:
  LinesFile() {
    const char* tmp = std::getenv("TMPDIR");
    std::error_code ignored;
    directory_ = std::filesystem::absolute(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", ignored)
                     .lexically_normal()
                     .string();
    path_ = (std::filesystem::path(directory_) / "iowatch-trace.XXXXXX").string();
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
  const std::string& directory() const { return directory_; }
  int error() const { return error_; }

 private:
  std::string directory_;
  std::string path_;
  int error_ = 0;
};

// What the processes wrote, a line at a time (the program may have written
// there too); its bad lines reported, and the processes that wrote no report.
Result<trace::TraceLines> ReadLines(const std::string& path) {
  auto lines = trace::ReadTraceJsonFile(path);
  if (!lines) return ErrorOf(lines);
  for (const Error& bad : lines->bad_lines) (void)ReportError("trace", bad);  // and go on
  std::ranges::sort(lines->processes, {}, &trace::ProcessTrace::pid);
  return lines;
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
    return ReportError(
        "trace",
        ErrnoError(lines.error(), "cannot make the trace file", lines.directory()).error());
  }
  TraceRun run;
  run.command = options->command;
  auto status = RunTracedCommand(options->command, *library, lines.path(), options->time_calls);
  if (!status) return ReportError("trace", status.error());
  run.exit_status = *status;
  auto read = ReadLines(lines.path());
  if (!read) return ReportError("trace", read.error());
  run.unreported = trace::Unreported(*read);
  run.processes = std::move(read->processes);
  run.what_if = options->what_if;
  run.what_if_settings = WhatIfSettingsOf(*options);
  bool what_if_failed = false;
  if (options->what_if) {
    std::vector<trace::TracedFile> files = FilesAcrossProcesses(run.processes);
    std::erase_if(files, [](const auto& f) { return f.path == trace::kOtherFiles; });
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
