// vtkTopoVoxPersistenceExchange.h - (private to TopoVox::Filters) the MPI
// exchange around the Morse engine's pieces (Kernels' PersistencePieces.h):
// each rank builds its piece's part of the Morse complex, rank 0 gathers the
// parts and pairs them, asks every rank for the Morse boundaries the matrix
// needs, and reduces. Only messages here; the algorithm is in Kernels/.
#ifndef vtkTopoVoxPersistenceExchange_h
#define vtkTopoVoxPersistenceExchange_h

#include "topovox/PersistencePieces.h"

class vtkMultiProcessController;

namespace topovox_vtk
{
// Collective over the `ranks` participating ranks. `local` is the rank's
// array (null for a rank with no piece) holding region.requiredVoxels().
// Returns the diagram on rank 0, an empty one elsewhere. When any rank
// fails, every rank throws: std::runtime_error with the reason (the failing
// rank's own, "another rank ..." elsewhere), or topovox::Aborted.
topovox::PersistenceDiagram distributedPersistence(vtkMultiProcessController* controller, int ranks,
  const topovox::GridView* local, const topovox::PieceRegion& region,
  const topovox::PersistenceOptions& options);
}

#endif
