// An enum's one table of names: both directions and the lists help and
// errors print, in table order; a value or name the table lacks is said so.
#include "common/enum_names.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

enum class Colour { kRed, kGreen, kBlue, kUnnamed };
constexpr EnumName<Colour> kColours[] = {
    {Colour::kGreen, "green"}, {Colour::kRed, "red"}, {Colour::kBlue, "blue"}};

TEST(EnumNames, BothDirectionsFromOneTable) {
  for (const EnumName<Colour>& entry : kColours) {
    EXPECT_EQ(NameIn<Colour>(kColours, entry.value), entry.name);
    EXPECT_EQ(ValueIn<Colour>(kColours, entry.name), entry.value);
  }
  EXPECT_EQ(NameIn<Colour>(kColours, Colour::kUnnamed), "?");
  EXPECT_EQ(ValueIn<Colour>(kColours, "Red"), std::nullopt);  // exact spelling only
  EXPECT_EQ(ValueIn<Colour>(kColours, ""), std::nullopt);
}

TEST(EnumNames, ListsInTableOrder) {
  EXPECT_EQ(NamesIn<Colour>(kColours, ", "), "green, red, blue");
  EXPECT_EQ(NamesIn<Colour>(kColours, ", ", " or "), "green, red or blue");
  EXPECT_EQ(NamesIn<Colour>(std::span(kColours).first(1), ", ", " or "), "green");
  EXPECT_EQ(NamesIn<Colour>(std::span(kColours).first(2), "|", " or "), "green or red");
}

}  // namespace
}  // namespace iowatch
