/**
 * @class   vtkPersistenceBatchFilter
 * @brief   Persistence diagrams of many images as one batch: the blocks of
 *          a multiblock or partitioned data set of images, or every time
 *          step of an image series, in one table of pairs.
 *
 * Each image's diagram is exactly vtkPersistenceDiagramFilter's (the
 * conventions of Kernels/include/topovox/Persistence.h; equal to
 * CubicalRipser's), computed together by topovox::computePersistenceBatch,
 * which shares the images among the CPU threads (one image per thread):
 * what a training batch or a time series of small images needs, where one
 * image at a time would leave threads idle. With Device GPU, images of one
 * size are summarised together on the device (gradient, critical cells,
 * path ends, Morse boundaries) and paired on the CPU threads.
 *
 * Input: a vtkImageData with time steps (every step is read, one per
 * execution, and kept until the batch runs: memory is the series' selected
 * array), or a vtkMultiBlockDataSet / vtkPartitionedDataSet(Collection)
 * whose leaves are images (any other leaf is an error). The array is the
 * selected one (else each image's active scalars), Component as in the
 * diagram filter.
 *
 * Outputs:
 * - port 0, the pairs of every image: Image (its index in the batch: the
 *   time step, or the leaf's order in the composite), Time (the step's time;
 *   the leaf's flat index for composites), PairIdentifier (within the image),
 *   Dimension, Birth, Death (+-inf for essential classes), Persistence,
 *   IsFinite, BirthId, DeathId (voxel ids in that image; -1 for none);
 * - port 1, one row per image: Image, Time, Voxels, and Pairs0..Pairs3 (the
 *   pairs of each dimension, essential ones included) and
 *   TotalPersistence0..3 (the sum of the finite persistences), to plot
 *   against time.
 *
 * MPI: a time series is read whole on rank 0, which computes; for a
 * composite input each rank computes the leaves it holds and rank 0 gathers
 * the rows. The other ranks output empty tables.
 */
#ifndef vtkPersistenceBatchFilter_h
#define vtkPersistenceBatchFilter_h

#include "TopoVoxFiltersModule.h"
#include "vtkTableAlgorithm.h"

#include <memory>

class vtkMultiProcessController;

class TOPOVOXFILTERS_EXPORT vtkPersistenceBatchFilter : public vtkTableAlgorithm
{
public:
  static vtkPersistenceBatchFilter* New();
  vtkTypeMacro(vtkPersistenceBatchFilter, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** Cubical construction: 0 V (default), 1 T. */
  vtkSetClampMacro(Construction, int, 0, 1);
  vtkGetMacro(Construction, int);
  /** 0 sublevel (default), 1 superlevel. */
  vtkSetClampMacro(Filtration, int, 0, 1);
  vtkGetMacro(Filtration, int);
  /** Pairs of dimension up to this (default 3: all). */
  vtkSetClampMacro(MaximumDimension, int, 0, 3);
  vtkGetMacro(MaximumDimension, int);
  /** Pairs with persistence above this (default 0: all). */
  vtkSetClampMacro(MinimumPersistence, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinimumPersistence, double);
  /** 0 auto (default), 1 CPU, 2 GPU (images of one size together on the device). */
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);
  /** Component of the array; -1 (default): the only one. */
  vtkSetClampMacro(Component, int, -1, VTK_INT_MAX);
  vtkGetMacro(Component, int);
  /** CPU threads; 0 (default) uses every core. */
  vtkSetClampMacro(NumberOfThreads, int, 0, 4096);
  vtkGetMacro(NumberOfThreads, int);
  void SetController(vtkMultiProcessController* controller);
  vtkGetObjectMacro(Controller, vtkMultiProcessController);

protected:
  vtkPersistenceBatchFilter();
  ~vtkPersistenceBatchFilter() override;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Construction = 0;
  int Filtration = 0;
  int MaximumDimension = 3;
  double MinimumPersistence = 0.0;
  int Device = 0;
  int Component = -1;
  int NumberOfThreads = 0;
  vtkMultiProcessController* Controller = nullptr;

private:
  vtkPersistenceBatchFilter(const vtkPersistenceBatchFilter&) = delete;
  void operator=(const vtkPersistenceBatchFilter&) = delete;
  struct Batch; // the time loop and the images gathered so far
  std::unique_ptr<Batch> State;
};

#endif
