// ExpositionWriter: writes Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/) into the
// caller's string: HELP and TYPE lines per family, escaped help and label
// values, integers printed exactly and floats in shortest round-trip form
// (+Inf, -Inf, NaN spelled as Prometheus expects). It buffers nothing: the
// caller emits families in the order they are to appear (sorted by name, for
// output that is byte-for-byte reproducible); a family may be continued by a
// later writer, which is how /metrics is rendered piece by piece.
// A family's HELP and TYPE lines are written with its first sample, so a
// family without samples leaves no trace.
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace iowatch::daemon {

struct Label {
  std::string_view name;
  std::string_view value;
};

class ExpositionWriter {
 public:
  explicit ExpositionWriter(std::string& out) : out_(&out) {}

  // Starts the family `name`; the three views must stay valid until the next
  // Family call. `header_written` continues a family whose HELP and TYPE
  // lines an earlier piece already carries.
  void Family(std::string_view name, std::string_view type, std::string_view help,
              bool header_written = false);
  bool header_written() const { return header_written_; }

  void Sample(std::initializer_list<Label> labels, double value);
  void SampleInt(std::initializer_list<Label> labels, uint64_t value);
  void Sample(const Label* labels, size_t count, double value);
  // A sample of a histogram or summary family: the family's name with
  // `suffix` ("_bucket", "_sum", "_count"); the header names the family.
  void SuffixedSample(std::string_view suffix, const Label* labels, size_t count, double value);
  void SuffixedSampleInt(std::string_view suffix, const Label* labels, size_t count,
                         uint64_t value);

 private:
  void WriteHeader();

  std::string* out_;
  std::string_view name_, type_, help_;
  bool header_written_ = false;
};

}  // namespace iowatch::daemon
