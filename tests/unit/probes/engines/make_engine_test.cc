// Engines() is the one list of engines: each engine names itself with its
// entry, and the asynchronous ones are those that say they are not
// synchronous.
#include <gtest/gtest.h>

#include <algorithm>

#include "probes/engines/engine.h"

namespace iowatch::probes {
namespace {

TEST(MakeEngine, EveryEngineIsNamedAsTheListNamesIt) {
  ASSERT_FALSE(Engines().empty());
  for (const EnumName<EngineKind>& engine : Engines()) {
    const auto made = MakeEngine(engine.value);
    ASSERT_NE(made, nullptr) << engine.name;
    EXPECT_EQ(made->Name(), engine.name);
    EXPECT_EQ(ToString(engine.value), engine.name);
  }
}

TEST(MakeEngine, AsynchronousEnginesAreTheOnesNotSynchronous) {
  const std::vector<EngineKind> asynchronous = AsynchronousEngines();
  for (const EnumName<EngineKind>& engine : Engines()) {
    const bool listed = std::ranges::find(asynchronous, engine.value) != asynchronous.end();
    EXPECT_EQ(listed, !MakeEngine(engine.value)->IsSynchronous()) << engine.name;
  }
  EXPECT_EQ(asynchronous, (std::vector<EngineKind>{EngineKind::kIoUring, EngineKind::kLibaio}));
}

}  // namespace
}  // namespace iowatch::probes
