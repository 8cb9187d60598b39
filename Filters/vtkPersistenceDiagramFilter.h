/**
 * @class   vtkPersistenceDiagramFilter
 * @brief   Persistence diagram of an image's sublevel or superlevel filtration.
 *
 * Exact persistent homology (Z/2) of the cubical complex of a 1D, 2D or 3D
 * image (V or T construction), computed by the discrete Morse engine of
 * Kernels/include/topovox/Persistence.h, whose conventions (NaN, essential
 * classes, superlevel values, tie-break) apply. Results equal CubicalRipser's.
 *
 * Outputs:
 * - port 0, the diagram, laid out as TTK lays out persistence diagrams (so
 *   that TTK's filters and users' habits carry over): a vtkUnstructuredGrid
 *   with one line cell per pair, from (birth, birth, 0) to (birth, death, 0),
 *   cell arrays PairIdentifier, PairType (the dimension), Persistence, Birth,
 *   IsFinite, point arrays CriticalType (TTK's numbering: 0 minimum,
 *   1 1-saddle, 2 2-saddle, 3 maximum), ttkVertexScalarField (the voxel's id
 *   in the input) and Coordinates (the voxel's world position), and the
 *   diagonal as a last cell with PairIdentifier -1. Essential classes are
 *   drawn up to the image's largest value (smallest, superlevel) with
 *   IsFinite 0.
 * - port 1, a vtkTable of the pairs: PairIdentifier (as in ports 0 and 2),
 *   Dimension, Birth, Death (inf for
 *   essential classes), Persistence, IsFinite, BirthId, DeathId (voxel ids,
 *   -1 for none) and BirthX..DeathZ (voxel grid coordinates).
 * - port 2, the critical voxels as vtkPolyData (vertices) in world
 *   coordinates, with PairIdentifier, Dimension, Persistence and Role
 *   (0 birth, 1 death), to see features in the render view.
 *
 * MPI: each rank reads its block of the image (plus a one-voxel halo) and
 * builds that block's part of the Morse complex (stratified, so that blocks
 * need nothing from each other: Kernels' PersistencePieces.h); rank 0
 * gathers the critical cells and paths, pairs them, asks the ranks for the
 * Morse boundaries its matrix needs, and outputs the diagram, identical to
 * the serial one. The other ranks output empty data sets. No rank ever
 * holds the whole image.
 */
#ifndef vtkPersistenceDiagramFilter_h
#define vtkPersistenceDiagramFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkAlgorithm.h"

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkPersistenceDiagramFilter : public vtkAlgorithm
{
public:
  static vtkPersistenceDiagramFilter* New();
  vtkTypeMacro(vtkPersistenceDiagramFilter, vtkAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Cubical construction: 0 V (default, voxels are vertices), 1 T. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  ///@}
  ///@{
  /** 0 sublevel (default), 1 superlevel. */
  vtkSetClampMacro(Filtration, int, 0, 1);
  vtkGetMacro(Filtration, int);
  ///@}
  ///@{
  /** Pairs of dimension up to this (default 3: all). */
  vtkSetClampMacro(MaximumDimension, int, 0, 3);
  vtkGetMacro(MaximumDimension, int);
  ///@}
  ///@{
  /** Pairs with persistence above this (default 0: all). */
  vtkSetClampMacro(MinimumPersistence, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinimumPersistence, double);
  ///@}
  ///@{
  /** 0 auto (default), 1 CPU, 2 GPU (persistence is CPU-only for now: warns). */
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);
  ///@}
  ///@{
  /** Component of the array. -1 (default): the only one; a multi-component
   * array then needs an explicit choice (an error says so). */
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  ///@}
  ///@{
  /** CPU threads; 0 (default) uses every core. */
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  ///@}
  ///@{
  /** Controller for distributed runs (default: the global controller). */
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);
  ///@}

  vtkTypeBool ProcessRequest(
    vtkInformation* request, vtkInformationVector** in, vtkInformationVector* out) override;

protected:
  vtkPersistenceDiagramFilter();
  ~vtkPersistenceDiagramFilter() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*);
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*);
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*);

  int Construction = 0;
  int Filtration = 0;
  int MaximumDimension = 3;
  double MinimumPersistence = 0.0;
  int Device = 0;
  int Component = -1;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkPersistenceDiagramFilter(const vtkPersistenceDiagramFilter&) = delete;
  void operator=(const vtkPersistenceDiagramFilter&) = delete;
};

#endif
