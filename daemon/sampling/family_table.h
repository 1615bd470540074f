// The family table behind MetricsCursor (metrics_renderer.h): each family of
// the sample's block is its HELP/TYPE text and parts, each part knowing how
// many items (devices, CPUs, cgroups...) a snapshot has for it and how to
// write item i. Each source's families are added by its own file
// (daemon/sources/<name>/<name>_families.cc, through its descriptor:
// sample_source.h), so the renderer stays a walk.
// Thread-safety: built once; immutable after.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/exposition/exposition.h"
#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

// One family of the output: HELP/TYPE text and its parts, whose items are
// written in order. A part's `count` is the number of items a snapshot has
// (devices, CPUs, fields); `write` writes item `item` (zero or more samples).
// `arg` selects a column of a series table.
struct Part {
  size_t (*count)(const Snapshot&);
  void (*write)(const Snapshot&, size_t item, size_t arg, ExpositionWriter&);
  size_t arg = 0;
};

struct FamilyDef {
  std::string name;
  std::string type;
  std::string help;
  std::vector<Part> parts;
};

inline size_t Once(const Snapshot&) { return 1; }

// One item when collector kName reported in this sample (it ran), else none:
// the count of a source's once-per-sample families.
template <const char* kName>
size_t IfCollectorRan(const Snapshot& s) {
  return std::ranges::count(s.collectors, std::string_view(kName), &CollectorStatus::name) > 0 ? 1
                                                                                               : 0;
}

// A row of a table of families that differ only in which value of an item
// they write: the family's name, TYPE and HELP beside `value`, what picks
// the value out (a pointer to a member, a function of the item, or a small
// struct of them). The source's write function reads rows[arg].value, so a
// family's text and its value are one row and cannot be paired wrong.
template <typename Value>
struct FamilyRow {
  const char* name;
  const char* type;
  const char* help;
  Value value;
};

// Collects parts per family name; a name added twice gets the parts of both
// calls in call order (the iostat table has one row per op of a family).
class TableBuilder {
 public:
  void Add(std::string name, std::string_view type, std::string help, Part part) {
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back({std::move(name), std::string(type), std::move(help), {}});
    families_[it->second].parts.push_back(part);
  }

  std::vector<FamilyDef> Sorted() && {
    std::sort(families_.begin(), families_.end(),
              [](const FamilyDef& a, const FamilyDef& b) { return a.name < b.name; });
    return std::move(families_);
  }

 private:
  std::vector<FamilyDef> families_;
  std::map<std::string, size_t, std::less<>> index_;
};

// One family per row, in the rows' order: its part counts items with `count`
// and writes item i with `write`, the row's index as arg.
template <typename Value, size_t N>
void AddRowFamilies(TableBuilder& t, const FamilyRow<Value> (&rows)[N],
                    size_t (*count)(const Snapshot&),
                    void (*write)(const Snapshot&, size_t, size_t, ExpositionWriter&)) {
  for (size_t i = 0; i < N; ++i) t.Add(rows[i].name, rows[i].type, rows[i].help, {count, write, i});
}

}  // namespace iowatch::daemon
