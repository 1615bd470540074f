#include "collectors/pressure/pressure.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

constexpr std::string_view kExpected =
    "expected 'some|full avg10=<percent> avg60=<percent> avg300=<percent> total=<us>'";

// A percentage as the kernel prints it ("%lu.%02lu"): digits, a dot, digits.
std::optional<double> ParsePercent(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() ||
      !std::isfinite(value) || value > 100) {
    return std::nullopt;
  }
  return value;
}

std::optional<PressureLine> ParseLine(std::span<const std::string_view> fields) {
  if (fields.size() != 5) return std::nullopt;
  PressureLine line;
  double* averages[] = {&line.avg10, &line.avg60, &line.avg300};
  constexpr std::string_view kKeys[] = {"avg10=", "avg60=", "avg300="};
  for (size_t i = 0; i < 3; ++i) {
    if (!fields[i + 1].starts_with(kKeys[i])) return std::nullopt;
    const auto value = ParsePercent(fields[i + 1].substr(kKeys[i].size()));
    if (!value) return std::nullopt;
    *averages[i] = *value;
  }
  if (!fields[4].starts_with("total=")) return std::nullopt;
  const auto total = ParseU64(fields[4].substr(6));
  if (!total) return std::nullopt;
  line.total_us = *total;
  return line;
}

}  // namespace

Result<Pressure> ParsePressure(std::string_view text, std::string_view path) {
  std::optional<PressureLine> some, full;
  int lines = 0;
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    lines = number;
    if (failure) return;
    std::string_view fields[6];
    const size_t n = SplitFieldsInto(line, fields);
    if (n == 0 || (fields[0] != "some" && fields[0] != "full")) return;
    const auto parsed =
        ParseLine(std::span<const std::string_view>(fields, std::min<size_t>(n, 6)));
    if (!parsed) {
      failure =
          Error::Parse(fmt::format("{}, found '{}'", kExpected, line), std::string(path), number);
      return;
    }
    (fields[0] == "some" ? some : full) = parsed;
  });
  if (failure) return std::unexpected(*failure);
  if (!some) {
    return MakeError(ErrorCode::kParse, fmt::format("{}: no 'some' line", kExpected),
                     std::string(path), lines > 0 ? lines : 1);
  }
  return Pressure{*some, full};
}

double PressureRatio(double percent) { return std::round(percent * 100) / 10000; }

Result<Pressure> ReadPressure(const FileTree& procfs, std::string_view resource) {
  const std::string relative = fmt::format("pressure/{}", resource);
  auto text = procfs.Read(relative, kMaxSysfsAttributeBytes);
  if (!text) return ErrorOf(text);
  return ParsePressure(*text, procfs.PathOf(relative).string());
}

}  // namespace iowatch::collectors
