// What the store reads back from SQLite and did not write itself (a damaged
// or foreign file): the histogram blob codec and the job options text. A blob
// that decodes encodes to a blob that decodes to the same buckets (not to the
// same bytes: a varint with redundant zero groups reads as its number), and
// options text that parses prints back to a job that parses the same.
#include <algorithm>
#include <vector>

#include "probes/store/store_codec.h"
#include "tests/fuzz/fuzz_input.h"

using iowatch::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto histogram = iowatch::probes::DecodeHistogram({data, size});
  if (histogram) {
    const std::vector<uint8_t> blob = iowatch::probes::EncodeHistogram(*histogram);
    const auto again = iowatch::probes::DecodeHistogram(blob);
    Require(again.has_value() && std::ranges::equal(again->Buckets(), histogram->Buckets()));
  }
  const auto spec = iowatch::probes::ParseJobOptionsText(iowatch::fuzz::AsText(data, size));
  if (spec) {
    const auto again = iowatch::probes::ParseJobOptionsText(iowatch::probes::JobOptionsText(*spec));
    Require(again.has_value() && *again == *spec);
  }
  return 0;
}
