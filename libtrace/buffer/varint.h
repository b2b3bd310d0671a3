// critpath — libtrace/buffer/varint.h: LEB128 varints and zigzag, shared by the trace codec and
// the analysis passes' own compact formats (the delay analysis's gathered batches, the what-if's
// replay messages).
#pragma once

#include <cstdint>
#include <vector>

namespace critpath::trace {

// A signed value as an unsigned one, small either way: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
inline uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
inline int64_t unzigzag(uint64_t z) { return int64_t(z >> 1) ^ -int64_t(z & 1); }

// Writes a LEB128 varint (7 bits a byte, low first) at p and returns the byte after it; no
// bounds check: callers reserve the worst case (10 bytes).
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = uint8_t(v) | 0x80;
    v >>= 7;
  }
  *p++ = uint8_t(v);
  return p;
}

// Appends a LEB128 varint to b.
inline void put_varint(std::vector<unsigned char>& b, uint64_t v) {
  while (v >= 0x80) {
    b.push_back(static_cast<unsigned char>(v | 0x80));
    v >>= 7;
  }
  b.push_back(static_cast<unsigned char>(v));
}

// Reads a LEB128 varint at p and advances p past it; false when the bytes end first or the
// value runs past 10 bytes.
inline bool get_varint(const unsigned char*& p, const unsigned char* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const unsigned char c = *p++;
    v |= uint64_t(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  return false;
}

}  // namespace critpath::trace
