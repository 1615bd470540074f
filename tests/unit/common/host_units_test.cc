// The host's page size and USER_HZ: sysconf's answer where it has one, the
// usual Linux value where it has none.
#include "common/host_units.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

TEST(HostUnits, SysconfsAnswerWhenPositiveElseTheUsualValue) {
  EXPECT_EQ(PositiveOr(16384, kUsualPageBytes), 16384u);
  EXPECT_EQ(PositiveOr(1, kUsualPageBytes), 1u);
  EXPECT_EQ(PositiveOr(-1, kUsualPageBytes), 4096u);  // sysconf's "cannot say"
  EXPECT_EQ(PositiveOr(0, kUsualUserHz), 100u);
  static_assert(PositiveOr(-1, kUsualUserHz) == 100);
}

TEST(HostUnits, ThisHostsValuesAreSysconfs) {
  const long page = sysconf(_SC_PAGESIZE);
  const long hz = sysconf(_SC_CLK_TCK);
  ASSERT_GT(page, 0) << "sysconf(_SC_PAGESIZE) answers on Linux";
  ASSERT_GT(hz, 0) << "sysconf(_SC_CLK_TCK) answers on Linux";
  EXPECT_EQ(PageBytes(), static_cast<uint64_t>(page));
  EXPECT_EQ(UserHz(), static_cast<uint64_t>(hz));
}

}  // namespace
}  // namespace iowatch
