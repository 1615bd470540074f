#include "common/thread_name.h"

#include <array>

namespace iowatch {

void NameThread(pthread_t thread, std::string_view name) {
  std::array<char, 16> text{};              // the kernel's TASK_COMM_LEN, with the NUL
  name.copy(text.data(), text.size() - 1);  // at most 15 bytes, the array's last stays NUL
  // Only ERANGE (too long, not possible here) or a thread already gone: the
  // name is a diagnostic, nothing depends on it.
  pthread_setname_np(thread, text.data());
}

}  // namespace iowatch
