// The LVM thin pools' families: the data and metadata space and what is used
// of it in bytes, the pool's mode as a state set, and the two flags an
// operator acts on (needs_check, error_if_no_space); labelled `pool` (the dm
// name) and `device` (dm-N) where sysfs names it.
#include <optional>
#include <string_view>

#include "collectors/thin_pool/thin_pool.h"
#include "daemon/sources/thin_pool/thin_pool_source.h"

namespace iowatch::daemon {
namespace {

using collectors::ThinPool;
using collectors::ThinPoolUsage;

size_t ThinPools(const Snapshot& s) { return s.thin_pool.pools.size(); }

// The pool's labels, sorted by name: device (where known), `mode` when
// given, pool.
void PoolSample(const ThinPool& pool, std::optional<std::string_view> mode, double value,
                ExpositionWriter& w) {
  Label labels[3];
  size_t n = 0;
  if (!pool.device.empty()) labels[n++] = {"device", pool.device};
  if (mode) labels[n++] = {"mode", *mode};
  labels[n++] = {"pool", pool.name};
  w.Sample(labels, n, value);
}

using BytesOf = std::optional<uint64_t> (ThinPool::*)() const;
constexpr FamilyRow<BytesOf> kThinPoolBytes[] = {
    {"iowatch_thin_pool_data_bytes", "gauge",
     "The thin pool's data space: total data blocks (dmsetup status) x the data block size "
     "(dmsetup table).",
     &ThinPool::DataBytes},
    {"iowatch_thin_pool_data_used_bytes", "gauge",
     "Data space the pool has allocated: used data blocks x the data block size. At the total, "
     "writes to unallocated blocks queue or fail (iowatch_thin_pool_error_if_no_space).",
     &ThinPool::DataUsedBytes},
    {"iowatch_thin_pool_metadata_bytes", "gauge",
     "The pool's metadata space: total metadata blocks x 4096 bytes.", &ThinPool::MetadataBytes},
    {"iowatch_thin_pool_metadata_used_bytes", "gauge",
     "Metadata space used: used metadata blocks x 4096 bytes. At the total the pool goes "
     "read-only.",
     &ThinPool::MetadataUsedBytes},
};

void Bytes(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const ThinPool& pool = s.thin_pool.pools[i];
  if (const auto v = (pool.*kThinPoolBytes[arg].value)()) {
    PoolSample(pool, std::nullopt, static_cast<double>(*v), w);
  }
}

constexpr FamilyRow<std::optional<bool> ThinPoolUsage::*> kThinPoolFlags[] = {
    {"iowatch_thin_pool_needs_check", "gauge",
     "1 when the pool's status says needs_check: its metadata must be repaired with thin_check "
     "before it can be written again.",
     &ThinPoolUsage::needs_check},
    {"iowatch_thin_pool_error_if_no_space", "gauge",
     "1 when a full pool fails writes at once (error_if_no_space), 0 when it queues them "
     "(queue_if_no_space, for up to dm-thin's no_space_timeout).",
     &ThinPoolUsage::error_if_no_space},
};

void Flag(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const ThinPool& pool = s.thin_pool.pools[i];
  if (!pool.status.usage) return;
  if (const auto v = (*pool.status.usage).*kThinPoolFlags[arg].value) {
    PoolSample(pool, std::nullopt, *v ? 1 : 0, w);
  }
}

// A state set: 1 for the pool's mode, 0 for the four others.
void Mode(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ThinPool& pool = s.thin_pool.pools[i];
  const std::string_view current = collectors::ThinPoolModeName(pool.status.mode);
  for (const std::string_view mode : collectors::kThinPoolModeNames) {
    PoolSample(pool, mode, mode == current ? 1 : 0, w);
  }
}

}  // namespace

void AddThinPoolFamilies(TableBuilder& t) {
  AddRowFamilies(t, kThinPoolBytes, ThinPools, Bytes);
  t.Add("iowatch_thin_pool_mode", "gauge",
        "1 for the pool's mode, 0 for the others: rw; out_of_data_space (data full: writes to "
        "new blocks queue or fail); ro (metadata full or a metadata error: read-only); fail "
        "(the pool failed); error (the kernel could not read its status).",
        {ThinPools, Mode});
  AddRowFamilies(t, kThinPoolFlags, ThinPools, Flag);
}

}  // namespace iowatch::daemon
