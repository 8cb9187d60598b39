// ScalarDispatch.h - turns a run-time ScalarType into a compile-time type,
// once per call, so that inner loops are typed.
#pragma once

#include "topovox/Grid.h"

#include <cstdint>
#include <stdexcept>

namespace topovox
{
template <typename T>
struct TypeTag
{
  using type = T;
};

template <typename F>
decltype(auto) dispatchScalarType(ScalarType t, F&& f)
{
  switch (t)
  {
    case ScalarType::Int8: return f(TypeTag<int8_t>{});
    case ScalarType::UInt8: return f(TypeTag<uint8_t>{});
    case ScalarType::Int16: return f(TypeTag<int16_t>{});
    case ScalarType::UInt16: return f(TypeTag<uint16_t>{});
    case ScalarType::Int32: return f(TypeTag<int32_t>{});
    case ScalarType::UInt32: return f(TypeTag<uint32_t>{});
    case ScalarType::Int64: return f(TypeTag<int64_t>{});
    case ScalarType::UInt64: return f(TypeTag<uint64_t>{});
    case ScalarType::Float32: return f(TypeTag<float>{});
    case ScalarType::Float64: return f(TypeTag<double>{});
  }
  throw std::invalid_argument("unknown scalar type");
}
} // namespace topovox
