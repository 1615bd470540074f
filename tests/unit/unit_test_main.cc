// The unit test binaries' main: GoogleTest's, except that a run in which a
// test skipped itself (GTEST_SKIP: no root, no io_uring...) and none failed
// exits 77, which ctest shows as a skipped test (cmake/gtest_suites.cmake), so
// that a skip is never hidden inside a suite that passed.
#include <gtest/gtest.h>

namespace {
constexpr int kSkipped = 77;
}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  if (failed != 0) return failed;
  return testing::UnitTest::GetInstance()->skipped_test_count() > 0 ? kSkipped : 0;
}
