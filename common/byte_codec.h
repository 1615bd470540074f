// Bytes in, bytes out for the compact formats iowatch writes itself (the
// store's histogram blobs, a clone's result sent up a pipe): unsigned LEB128
// varints (7 bits per byte, least significant group first, high bit = more
// follows), IEEE doubles as their 8 bytes, and length-prefixed strings.
// ByteReader never reads past its input: a truncated or oversized field
// makes the getter return nullopt and the reader stay failed.
// Thread-safety: none; one owner per writer or reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iowatch {

void PutVarint(std::vector<uint8_t>& out, uint64_t value);
// Advances `at`; nullopt when the input ends inside the varint or it does not
// fit in 64 bits (ten bytes, the last holding a single bit).
std::optional<uint64_t> GetVarint(std::span<const uint8_t> in, size_t& at);

class ByteWriter {
 public:
  void Varint(uint64_t value) { PutVarint(out_, value); }
  void Double(double value);
  void Bytes(std::span<const uint8_t> bytes);  // length, then the bytes
  void String(std::string_view text);          // length, then the bytes
  std::vector<uint8_t> Finish() && { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}
  std::optional<uint64_t> Varint();
  std::optional<double> Double();
  std::optional<std::span<const uint8_t>> Bytes();
  std::optional<std::string> String();
  bool AtEnd() const { return ok_ && at_ == in_.size(); }
  size_t Position() const { return at_; }

 private:
  std::optional<std::span<const uint8_t>> Take(size_t size);

  std::span<const uint8_t> in_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace iowatch
