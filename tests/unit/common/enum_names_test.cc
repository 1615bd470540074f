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

// The compile-time join, for constant text: a value spelled twice is listed
// once unless aliases are asked for, and the suffix ends it.
constexpr std::array<EnumName<Colour>, 4> kSpellings{{{Colour::kRed, "red"},
                                                      {Colour::kGreen, "green"},
                                                      {Colour::kRed, "rouge"},
                                                      {Colour::kBlue, "blue"}}};
constexpr char kBar[] = "|";
constexpr char kComma[] = ", ";
constexpr char kSuffix[] = "[!]";

TEST(EnumNames, JoinedAtCompileTime) {
  static_assert(JoinedNames<kSpellings, kBar, false>::kText == "red|green|blue");
  EXPECT_EQ((JoinedNames<kSpellings, kComma, true>::kText), "red, green, rouge, blue");
  EXPECT_EQ((JoinedNames<kSpellings, kBar, false, kSuffix>::kText), "red|green|blue[!]");
  EXPECT_EQ((JoinedNames<kSpellings, kComma, true>::kText),
            NamesIn<Colour>(kSpellings, ", "));  // the runtime join agrees
}

// The completeness check a table's static_assert makes: every enumerator,
// each once, in any order; one missing, one named twice, or one past the
// end is found.
enum class Light { kOff, kDim, kBright };
constexpr EnumName<Light> kAllLights[] = {
    {Light::kOff, "off"}, {Light::kDim, "dim"}, {Light::kBright, "bright"}};
constexpr EnumName<Light> kLastMissing[] = {{Light::kOff, "off"}, {Light::kDim, "dim"}};
constexpr EnumName<Light> kOutOfOrder[] = {
    {Light::kDim, "dim"}, {Light::kOff, "off"}, {Light::kBright, "bright"}};
constexpr EnumName<Light> kTwice[] = {
    {Light::kDim, "dim"}, {Light::kOff, "off"}, {Light::kDim, "low"}};
constexpr EnumName<Light> kMiddleMissing[] = {{Light::kOff, "off"}, {Light::kBright, "bright"}};

TEST(EnumNames, CompletenessIsCheckedAtCompileTime) {
  static_assert(IsEnumerator<Light::kBright>());
  static_assert(!IsEnumerator<static_cast<Light>(3)>());
  static_assert(NamesEveryValue<kAllLights>());
  static_assert(!NamesEveryValue<kLastMissing>());
  static_assert(NamesEveryValue<kOutOfOrder>());
  static_assert(!NamesEveryValue<kTwice>());
  static_assert(!NamesEveryValue<kMiddleMissing>());
  EXPECT_TRUE(NamesEveryValue<kAllLights>());
  EXPECT_FALSE(NamesEveryValue<kLastMissing>());
}

}  // namespace
}  // namespace iowatch
