// Simplification.cpp - persistence-based simplification (Simplification.h):
// the diagram, the outermost region of each removed pair, and the region
// set to the pair's spill value; twice (components, then the top dimension).
#include "topovox/Simplification.h"

#include "topovox/FeatureRegions.h"
#include "topovox/Persistence.h"

#include "../common/GridValues.h"
#include "../common/ScalarDispatch.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace
{
// One step on `values` (packed, the image's type): kind 0 fills the
// removed components to their death values, kind 1 lowers the removed
// enclosed regions to their birth values.
template <typename T>
void simplifyStep(
  std::vector<T>& values, ScalarType type, const int64_t dims[3], const SimplificationOptions& o, int kind)
{
  const GridView g = GridView::contiguous(values.data(), type, dims[0], dims[1], dims[2]);
  PersistenceOptions po;
  po.construction = o.construction;
  po.filtration = o.filtration;
  po.threads = o.threads;
  const PersistenceDiagram d = computePersistence(g, po);
  const int top = d.dimension >= 2 ? d.dimension - 1 : -1;
  FeatureRegionOptions ro;
  ro.construction = o.construction;
  ro.filtration = o.filtration;
  ro.threads = o.threads;
  ro.innermost = false; // the outermost removed region holds the spill value
  for (size_t i = 0; i < d.pairs.size(); ++i)
  {
    const PersistencePair& p = d.pairs[i];
    if (!p.essential && p.persistence() <= o.maxPersistence && p.dimension == (kind == 0 ? 0 : top))
      ro.pairs.push_back(static_cast<int64_t>(i));
  }
  if (ro.pairs.empty())
    return;
  const FeatureRegions r = featureRegions(g, d, ro);
  const std::vector<int32_t>& labels = r.labels[kind];
  for (size_t v = 0; v < labels.size(); ++v)
    if (labels[v] >= 0)
    {
      const PersistencePair& p = d.pairs[static_cast<size_t>(labels[v])];
      values[v] = static_cast<T>(kind == 0 ? p.death : p.birth);
    }
}
} // namespace

std::vector<unsigned char> simplifyPersistence(const GridView& image, const SimplificationOptions& o)
{
  const std::string why = validateGrid(image);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (image.memory != MemorySpace::Host)
    throw std::invalid_argument("simplification needs the image in host memory");
  if (!(o.maxPersistence >= 0))
    throw std::invalid_argument("the persistence threshold must be a number >= 0");
  std::vector<unsigned char> out;
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values = packedValues<T>(image);
    if (o.components)
      simplifyStep(values, image.type, image.dims, o, 0);
    if (o.enclosed)
      simplifyStep(values, image.type, image.dims, o, 1);
    out.resize(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
  });
  return out;
}

} // namespace topovox
