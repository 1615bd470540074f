// LeakOnPurpose: memory given up for good, not by mistake. A hung device may
// still complete I/O into a run's buffers and ring long after the run gave up
// on it (probes/engines/engine.h, AbandonedIos), so they are never freed;
// under LeakSanitizer the allocation is marked as intended, so the sanitizer
// trees stay strict about every other leak.
// Thread-safety: may be called from any thread.
#pragma once

#include "common/sanitizers.h"

#ifdef IOWATCH_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace iowatch {

template <class T>
void LeakOnPurpose(T* allocation) {
#ifdef IOWATCH_ASAN
  if (allocation != nullptr) __lsan_ignore_object(allocation);
#else
  (void)allocation;
#endif
}

}  // namespace iowatch
