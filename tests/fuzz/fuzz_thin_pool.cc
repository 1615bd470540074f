// dmsetup's thin-pool status and table output (collectors/thin_pool/), each
// input read as both, and the pools joined. Property: a pool's name and
// devices, label values on /metrics, are valid UTF-8 without control
// characters.
#include "collectors/thin_pool/thin_pool.h"
#include "common/utf8.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void RequireLabelText(const std::string& text) {
  iowatch::fuzz::Require(iowatch::ToValidUtf8(text) == text);
  iowatch::fuzz::Require(!iowatch::ControlCharacterAt(text).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = iowatch::fuzz::AsText(data, size);
  auto statuses = iowatch::collectors::ParseThinPoolStatus(text, "dmsetup status");
  auto tables = iowatch::collectors::ParseThinPoolTable(text, "dmsetup table");
  if (tables) {
    for (const auto& table : *tables) {
      RequireLabelText(table.name);
      RequireLabelText(table.metadata_device);
      RequireLabelText(table.data_device);
    }
  }
  if (statuses && tables) {
    for (const auto& pool : iowatch::collectors::JoinThinPools(*statuses, *tables)) {
      RequireLabelText(pool.name);
      (void)pool.DataBytes();
      (void)pool.DataUsedBytes();
      (void)pool.MetadataBytes();
      (void)pool.MetadataUsedBytes();
    }
  }
  return 0;
}
