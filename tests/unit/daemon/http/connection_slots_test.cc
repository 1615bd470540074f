// ConnectionSlots' admission policy on its own, without sockets: the
// per-address share, who gives way when every slot is held, and that a
// connection answering a request never does.
#include "daemon/http/connection_slots.h"

#include <gtest/gtest.h>

#include <string>

namespace iowatch::daemon::http::internal {
namespace {

class ConnectionSlotsTest : public ::testing::Test {
 protected:
  // Adds `count` connections from `client` (ids next_id_, next_id_ + 1, ...),
  // each of which must be admitted without evicting anyone.
  void Fill(const std::string& client, int count) {
    for (int i = 0; i < count; ++i) {
      const auto admission = slots_.Admit(client);
      ASSERT_TRUE(admission.admit) << client << " #" << i;
      ASSERT_EQ(admission.evict, 0u) << client << " #" << i;
      slots_.Add(next_id_++, client);
    }
  }

  ConnectionSlots slots_{8};  // one address may hold 6
  uint64_t next_id_ = 1;
};

TEST_F(ConnectionSlotsTest, PerClientShareIsThreeQuartersAndAllBelowFour) {
  EXPECT_EQ(PerClientConnections(64), 48u);
  EXPECT_EQ(PerClientConnections(8), 6u);
  EXPECT_EQ(PerClientConnections(3), 3u);
  EXPECT_EQ(PerClientConnections(1), 1u);
}

TEST_F(ConnectionSlotsTest, AnAddressIsRefusedBeyondItsShareWhileSlotsAreFree) {
  Fill("a", 6);
  EXPECT_FALSE(slots_.Admit("a").admit);
  EXPECT_EQ(slots_.size(), 6u);
  slots_.Remove(1);  // its share frees with its connections
  EXPECT_EQ(slots_.Holding("a"), 5u);
  EXPECT_TRUE(slots_.Admit("a").admit);
}

TEST_F(ConnectionSlotsTest, WhenFullANewcomerTakesTheOldestWaiterOfTheBiggestHolder) {
  Fill("b", 2);  // ids 1, 2: older, but "b" holds fewer
  Fill("a", 6);  // ids 3..8
  EXPECT_TRUE(slots_.full());
  const auto admission = slots_.Admit("scraper");
  EXPECT_TRUE(admission.admit);
  EXPECT_EQ(admission.evict, 3u);
}

TEST_F(ConnectionSlotsTest, AConnectionAnsweringARequestNeverGivesWay) {
  Fill("a", 6);
  Fill("b", 2);
  for (uint64_t id = 1; id <= 8; ++id) slots_.SetWaiting(id, false);
  EXPECT_FALSE(slots_.Admit("scraper").admit);
  slots_.SetWaiting(8, true);  // "b"'s second waits for its next request
  const auto admission = slots_.Admit("scraper");
  EXPECT_TRUE(admission.admit);
  EXPECT_EQ(admission.evict, 8u) << "the only waiting one, though its address holds fewer";
}

TEST_F(ConnectionSlotsTest, WaitingAgainAfterAnAnswerMakesAConnectionTheNewestWaiter) {
  Fill("a", 4);
  Fill("b", 4);
  slots_.SetWaiting(1, false);  // "a"'s oldest answers a request, then idles
  slots_.SetWaiting(1, true);
  EXPECT_EQ(slots_.Admit("scraper").evict, 2u);
  slots_.SetWaiting(2, true);  // already waiting: keeps its place
  EXPECT_EQ(slots_.Admit("scraper").evict, 2u);
}

TEST_F(ConnectionSlotsTest, AnAddressHoldingSomeTakesASlotOnlyToEvenTheHoldings) {
  Fill("a", 4);
  Fill("b", 4);
  // "a" holding 4 against "b"'s 4: a swap would change nothing; refused, so
  // equal floods do not churn each other's connections.
  EXPECT_FALSE(slots_.Admit("a").admit);
  slots_.Remove(1);
  Fill("c", 1);  // a 3, b 4, c 1: full again
  EXPECT_FALSE(slots_.Admit("a").admit) << "3 + 1 is not fewer than 4";
  const auto even = slots_.Admit("c");  // 1 + 1 < 4
  EXPECT_TRUE(even.admit);
  EXPECT_EQ(even.evict, 5u) << "b's oldest";
}

TEST_F(ConnectionSlotsTest, AnAddressHoldingNoneTakesTheOldestWaiterAmongEqualHolders) {
  for (int i = 0; i < 8; ++i) Fill("client" + std::to_string(i), 1);
  const auto admission = slots_.Admit("scraper");
  EXPECT_TRUE(admission.admit);
  EXPECT_EQ(admission.evict, 1u);
}

TEST_F(ConnectionSlotsTest, RemovingAnUnknownOrEvictedIdChangesNothing) {
  Fill("a", 2);
  slots_.Remove(1);
  slots_.Remove(1);  // the evicted connection's destructor
  slots_.Remove(99);
  slots_.SetWaiting(1, true);
  EXPECT_EQ(slots_.size(), 1u);
  EXPECT_EQ(slots_.Holding("a"), 1u);
  slots_.Remove(2);
  EXPECT_EQ(slots_.Holding("a"), 0u);
  EXPECT_EQ(slots_.size(), 0u);
}

}  // namespace
}  // namespace iowatch::daemon::http::internal
