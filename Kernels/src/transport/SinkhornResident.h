// SinkhornResident.h - the scaling method's iterations with K held in
// shared memory (SinkhornResidentCUDA.cu): one cooperative launch runs
// many periods of iterations (up to a thousand iterations), each SM keeping
// its rows of K and of K^T for all of them, the half-iterations separated
// by grid-wide barriers, the stopping rule checked inside.
//
// Why: relaunched each half-iteration, a row kernel reads the 8 MB of K
// (d = 1024) and every pair's vector once per row tile from L2, and pays
// a launch and a drain; at 16 pairs that made an iteration 35 us. Held in
// shared memory, K is read from L2 once a launch and each block reads the
// pairs' vectors once a half-iteration. Launched once a period, with the
// host reading the running pairs' count after each, every period paid a
// launch, the rows' loads and a round trip to the host.
//
// It applies where each block's rows of K and K^T fit in an SM's shared
// memory with every block resident at once (d up to about 1,300 in double
// on an H200): residentPlan says so, or returns no blocks.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace topovox
{
namespace transport
{
// The device arrays of one scaling solve (SinkhornCUDA.cu's), as the
// stepKernel and the row kernels use them.
struct ResidentScaling
{
  const double* K;
  const double* KT;
  const double* a;
  const double* b;
  double* U;
  double* V;
  double* Up; // the previous scalings, restored on a numerical error
  double* Vp;
  double* residualParts; // per pair and block: the block's sum of squared residuals
  double* errors;
  int* active;
  int* bad;
  int* status;
  int* iterations;
  int* counter; // iterations done
  int* running; // pairs still running after the launch
  int n, d;
  double stopThr;
};

struct ResidentPlan
{
  int rows = 0;   // rows of K (and of K^T) a block holds
  int blocks = 0; // 0: the resident kernel does not apply
  size_t sharedBytes = 0;
};

// The plan for n pairs of d bins on the current device; no blocks where the
// rows do not fit, the device cannot launch cooperatively, or
// TOPOVOX_SINKHORN_RESIDENT=0 (to measure and test the row kernels).
ResidentPlan residentPlan(int n, int d);

// Up to `iterations` iterations for every running pair, those numbered
// (from the counter on) by a multiple of `checkPeriod` checked: the
// marginal error and the stopping rule. The launch ends early when a check
// leaves no pair running. Then the counter and the number of running pairs
// are updated, as stepKernel does.
void launchResident(
  const ResidentScaling& g, const ResidentPlan& plan, int iterations, int checkPeriod, cudaStream_t stream);
}
}
