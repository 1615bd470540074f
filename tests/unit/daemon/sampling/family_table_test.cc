// The family table's rows: each row is one family, with the row's name, TYPE
// and HELP, whose part writes with the row's index, so the value a write
// function reads (rows[arg].value) is the one beside that text.
#include "daemon/sampling/family_table.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

size_t Two(const Snapshot&) { return 2; }
void Nothing(const Snapshot&, size_t, size_t, ExpositionWriter&) {}

const FamilyRow<double Snapshot::*> kRows[] = {
    {"iowatch_b", "gauge", "Second by name.", &Snapshot::interval_seconds},
    {"iowatch_a", "counter", "First by name.", &Snapshot::timestamp_seconds},
};

TEST(FamilyTable, EveryRowIsAFamilyWrittenWithItsIndex) {
  TableBuilder t;
  AddRowFamilies(t, kRows, Two, Nothing);
  const std::vector<FamilyDef> families = std::move(t).Sorted();
  ASSERT_EQ(families.size(), std::size(kRows));
  for (size_t row = 0; row < std::size(kRows); ++row) {
    SCOPED_TRACE(kRows[row].name);
    const auto it = std::ranges::find(families, std::string(kRows[row].name), &FamilyDef::name);
    ASSERT_NE(it, families.end());
    EXPECT_EQ(it->type, kRows[row].type);
    EXPECT_EQ(it->help, kRows[row].help);
    ASSERT_EQ(it->parts.size(), 1u);
    EXPECT_EQ(it->parts[0].arg, row);
    EXPECT_EQ(it->parts[0].count, &Two);
    EXPECT_EQ(it->parts[0].write, &Nothing);
  }
}

}  // namespace
}  // namespace iowatch::daemon
