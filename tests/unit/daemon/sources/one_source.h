// One source run alone on fixture trees, and its families rendered as
// /metrics writes them: what a source's test compares with another
// exporter's output.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "common/file_tree.h"
#include "daemon/exposition/exposition.h"
#include "daemon/sampling/sample_source.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"

namespace iowatch::daemon {

inline Snapshot CollectOneSource(const SourceDescriptor& descriptor, const FileTree& procfs,
                                 const FileTree& sysfs) {
  const auto source = descriptor.make();
  SourceContext context{.tick = 1,
                        .window_samples = 1,
                        .options = std::make_shared<const SamplerOptions>(TestSamplerOptions()),
                        .now = [] { return 0.0; },
                        .devices = {}};
  Snapshot snapshot;
  source->Collect(procfs, sysfs, context, snapshot);
  return snapshot;
}

inline std::string RenderSourceFamilies(void (*add_families)(TableBuilder&),
                                        const Snapshot& snapshot) {
  TableBuilder table;
  add_families(table);
  std::string text;
  ExpositionWriter w(text);
  for (const FamilyDef& family : std::move(table).Sorted()) {
    w.Family(family.name, family.type, family.help);
    for (const Part& part : family.parts) {
      for (size_t i = 0; i < part.count(snapshot); ++i) part.write(snapshot, i, part.arg, w);
    }
  }
  return text;
}

}  // namespace iowatch::daemon
