// DeviceApiUnavailable.cpp - the device APIs of the morphology
// and the distance transform (MorphologyOnDevice.h,
// DistanceTransformOnDevice.h) in a build without CUDA: every call says so.
#include "topovox/DistanceTransformOnDevice.h"
#include "topovox/MorphologyOnDevice.h"

#include <stdexcept>

namespace topovox
{
namespace
{
[[noreturn]] void unavailable()
{
  throw std::runtime_error("this build of TopoVox has no CUDA: its device API cannot run");
}
}

using Element = StructuringElement;
void binaryErosionOnDevice(const GridView&, const Element&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryDilationOnDevice(const GridView&, const Element&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryOpeningOnDevice(const GridView&, const Element&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryClosingOnDevice(const GridView&, const Element&, const BinaryOptions&, uint8_t*) { unavailable(); }
void greyErosionOnDevice(const GridView&, const Element&, const GreyOptions&, void*) { unavailable(); }
void greyDilationOnDevice(const GridView&, const Element&, const GreyOptions&, void*) { unavailable(); }
void greyOpeningOnDevice(const GridView&, const Element&, const GreyOptions&, void*) { unavailable(); }
void greyClosingOnDevice(const GridView&, const Element&, const GreyOptions&, void*) { unavailable(); }
void distanceTransformEdtOnDevice(const GridView&, const double*, double*, int32_t*) { unavailable(); }
}
