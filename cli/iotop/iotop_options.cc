#include "cli/iotop/iotop_options.h"

#include <string_view>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

constexpr std::string_view kUsage =
    "usage: iowatch iotop [-d DEV] [-o JSON] [--depth N] "
    "[interval [count]]";

// --depth N: its value is never attached ("--depth3" is an unknown option).
Result<bool> ParseDepth(const std::vector<std::string>& args, size_t& i, uint32_t& depth) {
  if (args[i] != "--depth") return false;
  auto value = OptionValue(args, i, args[i].size(), kUsage);
  const auto parsed = value ? ParseDecimal<uint32_t>(*value) : std::nullopt;
  if (!parsed || *parsed < 1 || *parsed > 16) {
    return MakeError(ErrorCode::kInvalidArgument, "--depth takes an integer from 1 to 16");
  }
  depth = *parsed;
  return true;
}

}  // namespace

Result<IotopOptions> ParseIotopArgs(const std::vector<std::string>& args) {
  uint32_t depth = IotopOptions{}.depth;
  auto shared =
      ParseReportArgs(args, kUsage, [&depth](const std::vector<std::string>& all, size_t& i) {
        return ParseDepth(all, i, depth);
      });
  if (!shared) return ErrorOf(shared);
  return IotopOptions{std::move(*shared), depth};
}

}  // namespace iowatch::daemon
