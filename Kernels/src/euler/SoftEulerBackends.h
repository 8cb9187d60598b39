// SoftEulerBackends.h - what SoftEuler.cpp shares with the CUDA path.
#pragma once

#include "topovox/SoftEuler.h"

#include "SoftEulerVoxel.h"

namespace topovox
{
namespace euler
{
void checkSoftProblem(const SoftEulerProblem& p);
SoftVoxelParams softParams(const SoftEulerProblem& p, const double u[3], double alpha);

#ifdef TOPOVOX_WITH_CUDA
// Every array of `p` and the outputs in GPU memory; the work is queued on
// the default stream and finished before return. Throws std::runtime_error on
// a CUDA failure.
void softForwardGPU(const SoftEulerProblem& p, void* chi);
void softBackwardGPU(const SoftEulerProblem& p, const void* gradChi, void* gradImages, void* gradThresholds,
  void* gradDirection, void* gradAlpha);
#endif
}
}
