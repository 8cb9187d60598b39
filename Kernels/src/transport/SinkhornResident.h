// SinkhornResident.h - Sinkhorn's iterations with the matrix held in
// shared memory (SinkhornResidentCUDA.cu): one cooperative launch runs
// many periods of iterations (up to a thousand iterations), each SM keeping
// its rows of K and of K^T for all of them, the half-iterations separated
// by grid-wide barriers, the stopping rule checked inside. The log domain
// runs there too, with its log-sum-exps factored (FactoredLogSumExp.h):
// the rows held are those of E = exp(-M / reg - rowMax) and its transpose's.
//
// Why: relaunched each half-iteration, a row kernel reads the 8 MB of K
// (d = 1024) and every pair's vector once per row tile from L2, and pays
// a launch and a drain; at 16 pairs that made an iteration 35 us. Held in
// shared memory, K is read from L2 once a launch and each block reads the
// pairs' vectors once a half-iteration. Launched once a period, with the
// host reading the running pairs' count after each, every period paid a
// launch, the rows' loads and a round trip to the host.
//
// Before, the log domain ran the row kernels: 30 us an iteration for one
// pair at d = 1024 (an exp a term), 52 us for 16 pairs (the tile kernel).
//
// It applies where each block's rows of K and K^T fit in an SM's shared
// memory with every block resident at once (d up to about 1,300 in double
// on an H200): residentPlan says so, or returns no blocks. In the log
// domain also only where the factored sums are exact for every row (the
// set-up's factorOk) and every pair's marginals have mass (so that every
// potential's maximum stays finite: the factors' shift).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace topovox
{
namespace transport
{
// The device arrays of one solve (SinkhornCUDA.cu's), as the stepKernel
// and the row kernels use them.
struct ResidentArrays
{
  const double* K; // the log domain: E and its transpose
  const double* KT;
  const double* a;
  const double* b;
  double* U; // the log domain: the potentials
  double* V;
  double* Up; // the previous scalings, restored on a numerical error (null in the log domain)
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
  // The log domain (null for the scaling method): log a and log b, the row
  // maxima of -M / reg and of its transpose, and three slots of n ordered
  // keys (SinkhornRows.cuh) in turn holding each update's maxima: update
  // h = 2 i (v) or 2 i + 1 (u) of iteration i reads slot (h + 2) % 3,
  // writes slot h % 3 and resets slot (h + 1) % 3. Before the first
  // update, slot 2 holds the key of 0 (u's start) and the others 0.
  const double* logA = nullptr;
  const double* logB = nullptr;
  const double* rowMax = nullptr;
  const double* rowMaxT = nullptr;
  unsigned long long* maxSlots = nullptr;
};

struct ResidentPlan
{
  int rows = 0;   // rows of K (and of K^T) a block holds
  int blocks = 0; // 0: the resident kernel does not apply
  size_t sharedBytes = 0;
};

// The plan for n pairs of d bins on the current device, for either method;
// no blocks where the rows do not fit, the device cannot launch
// cooperatively, or TOPOVOX_SINKHORN_RESIDENT=0 (to measure and test the
// row kernels).
ResidentPlan residentPlan(int n, int d, bool logDomain);

// Up to `iterations` iterations for every running pair, those numbered
// (from the counter on) by a multiple of `checkPeriod` checked: the
// marginal error and the stopping rule. The launch ends early when a check
// leaves no pair running. Then the counter and the number of running pairs
// are updated, as stepKernel does. The log domain's kernel where g.logA is
// set.
void launchResident(
  const ResidentArrays& g, const ResidentPlan& plan, int iterations, int checkPeriod, cudaStream_t stream);
}
}
