// `iowatch trace --what-if-engine`: its choices are the probes' asynchronous
// engines, under the names --ioengine takes, in the help and the error alike.
#include "cli/trace/trace_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "probes/engines/engine.h"

namespace iowatch::daemon {
namespace {

Result<TraceOptions> WithEngine(std::string_view name) {
  return ParseTraceArgs({fmt::format("--what-if-engine={}", name), "--", "true"});
}

TEST(TraceOptions, WhatIfEnginesAreTheAsynchronousProbeEngines) {
  const std::vector<probes::EngineKind> asynchronous = probes::AsynchronousEngines();
  ASSERT_FALSE(asynchronous.empty());
  for (const EnumName<probes::EngineKind>& engine : probes::Engines()) {
    SCOPED_TRACE(engine.name);
    const auto options = WithEngine(engine.name);
    if (std::ranges::find(asynchronous, engine.value) != asynchronous.end()) {
      ASSERT_TRUE(options) << options.error().message;
      EXPECT_EQ(options->what_if_engine, engine.value);
    } else {
      ASSERT_FALSE(options);
    }
  }
}

// The words users see, as they were when the choices were spelt out here.
TEST(TraceOptions, WhatIfEngineHelpAndErrorNameTheChoices) {
  const auto wrong = WithEngine("psync");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message,
            "--what-if-engine: expected io_uring or libaio, found \"psync\"");
  EXPECT_NE(TraceUsage().find("  --what-if-max-size=SIZE  do not replay files larger than SIZE "
                              "(default 4g)\n"),
            std::string::npos);
  EXPECT_NE(TraceUsage().find("\n  --what-if-engine=io_uring|libaio\n"
                              "                           the larger requests' engine (default "
                              "io_uring)\n  --library=PATH "),
            std::string::npos)
      << TraceUsage();
}

}  // namespace
}  // namespace iowatch::daemon
