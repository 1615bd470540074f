// A source's families rendered from a snapshot as /metrics writes them, for
// the tests that read a source's series without the whole renderer.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "daemon/exposition/exposition.h"
#include "daemon/sampling/family_table.h"

namespace iowatch::daemon {

// The families `add` adds whose names start with `prefix`.
inline std::string RenderFamilies(void (*add)(TableBuilder&), const Snapshot& snapshot,
                                  std::string_view prefix = "") {
  TableBuilder table;
  add(table);
  std::string text;
  ExpositionWriter w(text);
  for (const FamilyDef& family : std::move(table).Sorted()) {
    if (!family.name.starts_with(prefix)) continue;
    w.Family(family.name, family.type, family.help);
    for (const Part& part : family.parts) {
      for (size_t i = 0; i < part.count(snapshot); ++i) part.write(snapshot, i, part.arg, w);
    }
  }
  return text;
}

}  // namespace iowatch::daemon
