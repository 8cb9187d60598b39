// ByteOrder.h - the host's byte order and in-place byte swapping, so that
// readers can turn little- or big-endian files into native samples (and
// writers produce little-endian files on any host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace topovox
{
namespace cli
{

inline bool hostIsLittleEndian()
{
  const uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// Reverses the bytes of each of the `count` elements of `elementSize` bytes.
inline void swapBytes(void* data, size_t elementSize, size_t count)
{
  unsigned char* p = static_cast<unsigned char*>(data);
  switch (elementSize)
  {
    case 2:
      for (size_t i = 0; i < count; ++i, p += 2)
      {
        uint16_t v;
        std::memcpy(&v, p, 2);
        v = __builtin_bswap16(v);
        std::memcpy(p, &v, 2);
      }
      break;
    case 4:
      for (size_t i = 0; i < count; ++i, p += 4)
      {
        uint32_t v;
        std::memcpy(&v, p, 4);
        v = __builtin_bswap32(v);
        std::memcpy(p, &v, 4);
      }
      break;
    case 8:
      for (size_t i = 0; i < count; ++i, p += 8)
      {
        uint64_t v;
        std::memcpy(&v, p, 8);
        v = __builtin_bswap64(v);
        std::memcpy(p, &v, 8);
      }
      break;
    default: break; // single bytes have no order
  }
}

} // namespace cli
} // namespace topovox
