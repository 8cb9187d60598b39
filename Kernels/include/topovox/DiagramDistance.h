// DiagramDistance.h - the entropic Wasserstein distance between two
// persistence diagrams (finite points (birth, death) of one dimension),
// points allowed to match the diagonal, as GUDHI's wasserstein_distance
// defines the exact one:
//   W_q(X, Y) = (min over matchings of sum |x - y|_p^q + sum over
//   unmatched points of |x - diagonal|_p^q)^(1/q),
// with |.|_p the L_p distance in the plane (p = inf by default, as GUDHI)
// and |(b, d) - diagonal|_p = |d - b| 2^(1/p - 1).
// It is solved as optimal transport between X plus one diagonal point of
// mass |Y| and Y plus one diagonal point of mass |X| (the standard
// augmentation), with POT's log-domain Sinkhorn (Sinkhorn.h) at
// reg = relativeReg times the largest cost: as relativeReg -> 0 it tends to
// the exact distance (tested against GUDHI and an exact assignment). Each
// point is matched to where most of its mass goes. Cost: O((|X|+|Y|)^2) per
// iteration: for diagrams of up to a few thousand points.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace topovox
{

struct DiagramPoint
{
  double birth = 0, death = 0;
};

struct DiagramDistanceOptions
{
  double order = 1.0;      // q >= 1
  double internalP = INFINITY; // p >= 1, or infinity
  double relativeReg = 1e-3;
  int numItermax = 100000;
  double stopThr = 1e-12;
  int threads = 0;
};

struct DiagramDistance
{
  double distance = 0;        // the entropic W_q
  std::vector<int64_t> matchX; // per point of X: the index in Y, or -1 (the diagonal)
  std::vector<int64_t> matchY; // per point of Y: the index in X, or -1
  int iterations = 0;
  std::string warnings;
};

// Throws std::invalid_argument on non-finite points or bad options.
DiagramDistance diagramDistance(const std::vector<DiagramPoint>& X, const std::vector<DiagramPoint>& Y,
  const DiagramDistanceOptions& options);

// The distance between the essential classes (infinite death) of two
// diagrams, as GUDHI's keep_essential_parts: equal counts matched in
// sorted order of birth, sum |b - b'|^q; +inf when the counts differ.
double essentialCost(std::vector<double> birthsX, std::vector<double> birthsY, double order);

// A pair of a whole diagram (all dimensions), as the persistence outputs
// list them: death +-inf for an essential class; id names the pair in the
// caller's numbering (a row, a PairIdentifier).
struct DiagramPair
{
  int dimension = 0;
  double birth = 0, death = 0;
  int64_t id = 0;
};

// The distance of one dimension: finite points by diagramDistance, the
// essential classes by essentialCost, combined as
// distance = (finiteDistance^q + essentialCost)^(1/q).
struct DimensionDistance
{
  int dimension = 0;
  double distance = 0, finiteDistance = 0, essentialCost = 0;
  int iterations = 0;
  std::string warnings;
  // (id in X, id in Y), -1 for the diagonal: every finite point of X, then
  // the finite points of Y matched to the diagonal.
  std::vector<std::pair<int64_t, int64_t>> matching;
};

// One entry per dimension 0..3 that either diagram has pairs of, in
// increasing dimension; pairs of other dimensions are ignored.
std::vector<DimensionDistance> diagramDistances(
  const std::vector<DiagramPair>& X, const std::vector<DiagramPair>& Y, const DiagramDistanceOptions& options);

} // namespace topovox
