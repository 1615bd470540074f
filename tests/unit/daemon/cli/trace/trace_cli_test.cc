// `iowatch trace`'s report (issue 26): the processes that wrote no report
// (item 11), the JSON document of a command that is not UTF-8 (item 23).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon/cli/trace/trace_output.h"

namespace iowatch::daemon {
namespace {

TEST(TraceOutput, ProcessesThatWroteNoReportAreNamed) {
  TraceRun run;
  run.command = {"prog"};
  run.unreported.push_back({42, 1, "/bin/prog"});
  const std::string text = TraceText(run);
  EXPECT_NE(text.find("iowatch trace: pid 42 (parent 1) /bin/prog wrote no report: it ended by a "
                      "signal or _exit(), exec'd a program the library does not follow (static or "
                      "set-user-ID), or could not write its report"),
            std::string::npos)
      << text;
  const auto doc = nlohmann::json::parse(TraceJson(run));
  ASSERT_EQ(doc["unreported"].size(), 1u);
  EXPECT_EQ(doc["unreported"][0]["pid"], 42);
}

// A word of the command that is not UTF-8 made the JSON writer throw: exit
// 70 instead of the command's status.
TEST(TraceOutput, ACommandThatIsNotUtf8MakesValidJson) {
  TraceRun run;
  run.command = {"prog", "/data/\xff.dat"};
  run.exit_status = 3;
  const auto doc = nlohmann::json::parse(TraceJson(run));
  EXPECT_EQ(doc["command"][1], "/data/\xEF\xBF\xBD.dat");
  EXPECT_EQ(doc["exit_status"], 3);
}

}  // namespace
}  // namespace iowatch::daemon
