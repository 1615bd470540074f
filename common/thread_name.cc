#include "common/thread_name.h"

#include <algorithm>
#include <array>

namespace iowatch {

void NameThread(pthread_t thread, std::string_view name) {
  std::array<char, 16> text{};  // the kernel's TASK_COMM_LEN, with the NUL
  const size_t length = std::min(name.size(), text.size() - 1);
  std::copy_n(name.data(), length, text.data());
  // Only ERANGE (too long, not possible here) or a thread already gone: the
  // name is a diagnostic, nothing depends on it.
  pthread_setname_np(thread, text.data());
}

}  // namespace iowatch
