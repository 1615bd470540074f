// ExpositionWriter: builds Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): HELP and
// TYPE lines per family, escaped help and label values, integers printed
// exactly and floats in shortest round-trip form (+Inf, -Inf, NaN spelled
// as Prometheus expects). Families are buffered separately and emitted
// sorted by name, so output is byte-for-byte reproducible.
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace iowatch::daemon {

struct Label {
  std::string_view name;
  std::string_view value;
};

class ExpositionWriter {
 public:
  // Starts (or continues) the family `name`; samples go to the current family.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::initializer_list<Label> labels, double value);
  void SampleInt(std::initializer_list<Label> labels, uint64_t value);
  void Sample(const Label* labels, size_t count, double value);

  // All families, sorted by name.
  std::string Finish() &&;

 private:
  void AppendSeriesName(const Label* labels, size_t count);

  std::map<std::string, std::string, std::less<>> families_;
  std::string* current_ = nullptr;
  std::string current_name_;
};

}  // namespace iowatch::daemon
