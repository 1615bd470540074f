#include "common/byte_codec.h"

#include <bit>

namespace iowatch {

void PutVarint(std::vector<uint8_t>& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<uint8_t>(value));
}

std::optional<uint64_t> GetVarint(std::span<const uint8_t> in, size_t& at) {
  uint64_t value = 0;
  for (unsigned shift = 0; at < in.size(); shift += 7) {
    const uint8_t byte = in[at++];
    if (shift == 63 && byte > 1) return std::nullopt;
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

void ByteWriter::Double(double value) {
  uint64_t bits = std::bit_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i, bits >>= 8) out_.push_back(static_cast<uint8_t>(bits));
}

void ByteWriter::Bytes(std::span<const uint8_t> bytes) {
  Varint(bytes.size());
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void ByteWriter::String(std::string_view text) {
  Varint(text.size());
  out_.insert(out_.end(), text.begin(), text.end());
}

std::optional<uint64_t> ByteReader::Varint() {
  if (!ok_) return std::nullopt;
  const std::optional<uint64_t> value = GetVarint(in_, at_);
  ok_ = value.has_value();
  return value;
}

std::optional<std::span<const uint8_t>> ByteReader::Take(size_t size) {
  if (!ok_ || size > in_.size() - at_) {
    ok_ = false;
    return std::nullopt;
  }
  const std::span<const uint8_t> part = in_.subspan(at_, size);
  at_ += size;
  return part;
}

std::optional<double> ByteReader::Double() {
  const auto bytes = Take(8);
  if (!bytes) return std::nullopt;
  uint64_t bits = 0;
  for (int i = 7; i >= 0; --i) bits = (bits << 8) | (*bytes)[static_cast<size_t>(i)];
  return std::bit_cast<double>(bits);
}

std::optional<std::span<const uint8_t>> ByteReader::Bytes() {
  const std::optional<uint64_t> size = Varint();
  if (!size) return std::nullopt;
  if (*size > in_.size() - at_) {
    ok_ = false;
    return std::nullopt;
  }
  return Take(static_cast<size_t>(*size));
}

std::optional<std::string> ByteReader::String() {
  const auto bytes = Bytes();
  if (!bytes) return std::nullopt;
  return std::string(bytes->begin(), bytes->end());
}

}  // namespace iowatch
