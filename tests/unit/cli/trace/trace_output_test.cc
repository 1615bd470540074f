// `iowatch trace`'s text report names files and programs as a terminal may
// show them: a traced program chooses its file names, and
// "\e]0;PWNED\a" in one set the reader's terminal title.
#include "cli/trace/trace_output.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

TEST(TraceText, FileAndProgramNamesArePrintedEscaped) {
  TraceRun run;
  run.command = {"prog"};
  trace::ProcessTrace process;
  process.pid = 42;
  process.program = "/usr/bin/p\x1b[2J";
  process.clock = "monotonic";
  process.files.push_back({"/srv/x\x1b]0;PWNED\a\xff", {}});
  run.processes.push_back(process);
  run.what_if = true;
  run.what_if_files.push_back({"/srv/x\x1b]0;PWNED\a\xff", 4096, 0, "no reads or writes", {}, {}});
  const std::string text = TraceText(run);
  EXPECT_NE(text.find("iowatch trace: pid 42 (parent 0) /usr/bin/p\\x1b[2J:"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Trace close : program <-> os : /srv/x\\x1b]0;PWNED\\x07\\xff :"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n/srv/x\\x1b]0;PWNED\\x07\\xff (4096 bytes)\n"), std::string::npos) << text;
  for (const char raw : {'\x1b', '\a', '\xff'})
    EXPECT_EQ(text.find(raw), std::string::npos) << text;
}

}  // namespace
}  // namespace iowatch::daemon
