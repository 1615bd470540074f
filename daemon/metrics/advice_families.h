// iowatch_advice_finding: the family the renderer adds after the sources'
// (advice_families.cc). It is no source of its own: it reads what the disk
// and block_io sources put in the snapshot.
// Thread-safety: called once, when the family table is built.
#pragma once

#include "daemon/sampling/family_table.h"

namespace iowatch::daemon {

void AddAdviceFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
