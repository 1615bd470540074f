#include "trace/preload/file_table.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "common/fnv1a.h"
#include "trace/preload/async_safe.h"
#include "trace/process_trace.h"

namespace iowatch::trace {
namespace {

constexpr size_t kEntries = kMaxTracedFiles + 1;  // and kOtherFiles
constexpr size_t kIndexCells = 16384;             // a power of two, 4 x kEntries
static_assert(kIndexCells >= 2 * kEntries && (kIndexCells & (kIndexCells - 1)) == 0);

// "(descriptor N)" at `out`; its length.
size_t DescriptorName(int fd, char* out) {
  size_t length = Copy("(descriptor ", out);
  length += FormatDecimal(static_cast<unsigned>(fd), out + length);
  out[length++] = ')';
  return length;
}

}  // namespace

bool FileTable::Map() {
  const size_t entries = sizeof(Entry) * kEntries;
  const size_t index = sizeof(uint32_t) * kIndexCells;
  const size_t names = kMaxNameBytes * (kEntries + 1);  // + the scratch buffer
  void* memory = mmap(nullptr, entries + index + names, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return false;
  auto* bytes = static_cast<char*>(memory);
  entries_ = reinterpret_cast<Entry*>(bytes);  // constructed one by one in Add
  index_ = reinterpret_cast<uint32_t*>(bytes + entries);
  names_ = bytes + entries + index;
  scratch_ = names_ + kMaxNameBytes * kEntries;
  return true;
}

std::string_view FileTable::NameOf(int fd) {
  char link[40];
  size_t length = Copy("/proc/self/fd/", link);
  length += FormatDecimal(static_cast<unsigned>(fd), link + length);
  link[length] = '\0';
  const ssize_t n = readlink(link, scratch_, kMaxNameBytes);
  if (n > 0) {
    // A file's name is a path; a pipe's, a socket's, an anonymous inode's
    // are not.
    if (scratch_[0] != '/') return {};
    return {scratch_, static_cast<size_t>(n)};
  }
  // Gone from /proc/self/fd while /proc is there: closed since it was
  // opened (another thread's close); without /proc, only its number.
  if (access("/proc/self/fd", F_OK) == 0) return {};
  return {scratch_, DescriptorName(fd, scratch_)};
}

uint32_t FileTable::Find(std::string_view name) {
  const uint64_t hash = Fnv1a64(name);
  for (size_t cell = hash & (kIndexCells - 1);; cell = (cell + 1) & (kIndexCells - 1)) {
    const uint32_t slot = index_[cell];
    if (slot == 0) break;
    const Entry& entry = entries_[slot - 1];
    if (entry.hash == hash && Name(slot - 1) == name) return slot - 1;
  }
  if (count_ >= kMaxTracedFiles && name != kOtherFiles) return Find(kOtherFiles);
  return Add(name, hash);
}

uint32_t FileTable::Add(std::string_view name, uint64_t hash) {
  const uint32_t id = count_++;
  std::memcpy(names_ + names_used_, name.data(), name.size());
  Entry* entry = std::construct_at(&entries_[id]);
  entry->hash = hash;
  entry->name_offset = static_cast<uint32_t>(names_used_);
  entry->name_length = static_cast<uint32_t>(name.size());
  names_used_ += name.size();
  size_t cell = hash & (kIndexCells - 1);
  while (index_[cell] != 0) cell = (cell + 1) & (kIndexCells - 1);
  index_[cell] = id + 1;
  return id;
}

std::string_view FileTable::Name(uint32_t id) const {
  const Entry& entry = entries_[id];
  return {names_ + entry.name_offset, entry.name_length};
}

void FileTable::ResetTraces() {
  for (uint32_t id = 0; id < count_; ++id) entries_[id].trace = FileTrace{};
}

}  // namespace iowatch::trace
