// BenchSinkhorn.h - the transport benchmarks' common arguments (REG METHOD
// ITERATIONS DEVICE) as the solvers' options: stopThr 0, so that exactly
// ITERATIONS run, as in the peers' loops.
#pragma once

#include "topovox/Sinkhorn.h"

#include <cstdlib>
#include <string>

inline topovox::SinkhornOptions benchSinkhornOptions(
  const char* reg, const char* method, const char* iterations, const char* device)
{
  topovox::SinkhornOptions o;
  o.reg = std::atof(reg);
  o.method = std::string(method) == "sinkhorn_log" ? topovox::SinkhornMethod::SinkhornLog
                                                   : topovox::SinkhornMethod::Sinkhorn;
  o.numItermax = std::atoi(iterations);
  o.stopThr = 0;
  o.device = std::string(device) == "gpu" ? topovox::Device::GPU : topovox::Device::CPU;
  return o;
}
