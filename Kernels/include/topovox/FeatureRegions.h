// FeatureRegions.h - the region of the image that each feature of a
// persistence diagram occupies, where that is well defined, as a voxel label.
//
// * Dimension 0 (components): the connected component of the voxels
//   strictly below the class's death value that holds its birth voxel; for
//   the essential class, its whole component. Connectivity is the
//   construction's: V joins face neighbours (6 in 3D, 4 in 2D), T joins
//   voxels sharing a vertex (26, 8).
// * The top dimension of the image (voids in 3D, holes in 2D): by duality,
//   the region the class encloses when it is born: the connected component
//   of the voxels strictly above its birth value that holds its death
//   voxel, with the dual connectivity (V: 26 or 8, T: 6 or 4); NaN voxels
//   count as above everything. It never touches the image's border.
// * Other dimensions (tunnels in 3D) have no region; 1D images have only
//   dimension 0.
// Superlevel filtrations swap "below" and "above". These definitions do
// not depend on how ties are broken. An essential top-dimensional class (a
// hole around NaN voxels, which never fills) has no death voxel and no
// region.
//
// Every voxel is labelled, once for components and once for the top
// dimension, with the innermost selected region containing it (regions of
// one kind are nested or disjoint), as the index of its pair in
// diagram.pairs, or -1. All regions come from one union-find sweep per kind
// over the voxels in filtration order, the elder rule deciding which
// component dies; a pair is matched to the component whose oldest voxel
// (lowest value, then lowest index; for the top dimension highest value,
// then highest index) is its birth voxel (dimension 0) or its death voxel
// (top dimension). Dimension-0 pairs always match (the diagram's tie-break
// picks the same birth voxels); a top-dimensional pair whose death voxel
// ties in value with a higher-index voxel of its region is left unmatched
// (counted in `unmatched`).
#pragma once

#include "topovox/EulerCurve.h"
#include "topovox/Grid.h"
#include "topovox/Persistence.h"

#include <cstdint>
#include <vector>

namespace topovox
{

struct FeatureRegionOptions
{
  Construction construction = Construction::V;
  Filtration filtration = Filtration::Sublevel;
  // Pairs to label: those with persistence above this (and the essential
  // classes, see includeEssential), or, when `pairs` is not empty, exactly the pairs listed
  // (indices into diagram.pairs).
  double minPersistence = 0.0;
  std::vector<int64_t> pairs;
  // Whether essential classes are labelled when `pairs` is empty (the
  // essential component is the whole image: off to see the others alone).
  bool includeEssential = true;
  // Each voxel's label: the innermost selected region holding it (default)
  // or the outermost (the whole extent a group of nested regions covers).
  bool innermost = true;
  // Which kinds to label: components (dimension 0) and the top dimension's
  // enclosed regions. A kind not asked for is not computed: its labels stay
  // empty.
  bool components = true;
  bool enclosed = true;
  int threads = 0;
};

struct FeatureRegions
{
  // Per voxel (x fastest): pair index or -1; [0] components (dimension 0),
  // [1] the top dimension (empty for 1D images).
  std::vector<int32_t> labels[2];
  std::vector<int64_t> voxels;    // per pair of the diagram: region size, -1 when none
  int64_t unmatched = 0;          // selected pairs of dimension 0 or top without a region
};

// The image and options must be those the diagram was computed with
// (construction, filtration). Throws std::invalid_argument on bad input.
FeatureRegions featureRegions(const GridView& image, const PersistenceDiagram& diagram,
  const FeatureRegionOptions& options);

} // namespace topovox
