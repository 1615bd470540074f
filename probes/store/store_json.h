// The baseline exchange format (`iowatch baseline export` / `import`), so a
// fleet can share a golden baseline per hardware class. Version 1:
//
//   {
//     "iowatch_baselines": 1,
//     "baselines": [
//       {
//         "job": "randread-4k",
//         "fingerprint": "rw=randread;bs=4k;ioengine=io_uring;iodepth=1;direct=1;...",
//         "device": "259:0",
//         "model": "Samsung SSD 980 PRO 1TB",
//         "firmware": "5B2QGXA7",
//         "created_unix_ms": 1717243200000,
//         "runs": 5,
//         "metrics": [
//           {"op": "read", "metric": "iops", "median": 12873.5, "spread": 211.3},
//           ...
//         ]
//       }
//     ]
//   }
//
// Every key is required, except "firmware" (after "model": the firmware
// revision of the device when the baseline was exported, so that `import`
// only pins it on a disk of the same model and firmware; absent when the
// exporter could not read it) and "band" (after those: the baseline's load
// band, an integer 0 to 64, run_class.h; absent means 0, the clean runs', and
// the writer omits it then), and no other key is allowed (a field a reader
// does not know would be silently dropped: an iowatch older than bands
// refuses a document with a band rather than import it as a clean baseline).
// job, fingerprint and device are non-empty strings, model and firmware
// strings (may be ""), created_unix_ms and runs non-negative integers, op "read" or "write",
// metric a non-empty string, median and spread finite numbers with spread >= 0.
// A (job, fingerprint, device, band) appears once per document and an (op, metric)
// once per baseline. Run ids are not exported: they mean nothing on another
// host; "runs" says how many runs the baseline was built from.
// The writer emits baselines in ListBaselines order, numbers in their
// shortest round-trip form (locale-independent), strings as UTF-8 with only
// the escapes JSON requires; it is hand-written on purpose (store_json.cc).
// The reader is nlohmann-json, strict RFC 8259 (no comments, no trailing
// commas, no byte order mark, strings in UTF-8) with no duplicate keys and
// nesting <= 32, and its errors give the line, column and the path of the
// offending value with what was expected:
//   golden.json:7:20: baselines[0].runs: expected a non-negative integer, found a string
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/store/store.h"

namespace iowatch::probes {

inline constexpr int kBaselinesJsonVersion = 1;

std::string BaselinesToJson(std::span<const StoredBaseline> baselines);
// Each result is pinned, has no run ids and has run_count = "runs"; ids are 0.
// `source` becomes the Error's path.
Result<std::vector<StoredBaseline>> BaselinesFromJson(std::string_view json,
                                                      std::string_view source);

}  // namespace iowatch::probes
