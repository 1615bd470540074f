// What the sysstat reference outputs cannot show: names that sysstat itself
// would print into its JSON raw.
#include "cli/iostat/iostat_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace iowatch::daemon {
namespace {

// Adversarial test: a quote or backslash in a device name (or the
// host name) made `iostat -o JSON` invalid. sysstat 12.6 has the same bug;
// iowatch escapes (docs/commands.md lists it as a deliberate difference).
TEST(IostatJson, NamesAreEscapedSoTheDocumentStaysJson) {
  IostatJsonFormatter json(IostatLayout{.extended = true});
  const HostInfo host{"Linux", "we\"ird\\host", "6.1", "x86_64", 2};
  IostatReport report;
  report.devices = {IostatDeviceRow{"q\"d\\x", {}}, IostatDeviceRow{"bad\xff", {}}};
  report.display_names = {"q\"d\\x", "bad\xff"};
  const std::string text = json.Begin(host, "03/05/24") + json.Report(report) + json.End();
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  const auto& h = parsed["sysstat"]["hosts"][0];
  EXPECT_EQ(h["nodename"], "we\"ird\\host");
  const auto& disks = h["statistics"][0]["disk"];
  EXPECT_EQ(disks[0]["disk_device"], "q\"d\\x");
  EXPECT_EQ(disks[1]["disk_device"], "bad\xEF\xBF\xBD");  // invalid UTF-8 → U+FFFD
}

}  // namespace
}  // namespace iowatch::daemon
