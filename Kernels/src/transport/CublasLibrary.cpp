// CublasLibrary.cpp - see CublasLibrary.h.
#include "CublasLibrary.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace cuda
{
namespace
{
template <typename F>
void bind(void* library, const char* name, F& function)
{
  function = reinterpret_cast<F>(dlsym(library, name));
  if (!function)
    throw std::runtime_error(std::string("cuBLAS has no ") + name);
}

CublasLibrary open()
{
  const std::string versioned = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* library = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    library = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (!library)
  {
    const char* why = dlerror();
    throw std::runtime_error("cannot open " + versioned + (why ? std::string(": ") + why : std::string()));
  }
  // Kept open for the process: handles made from it live in thread-locals.
  CublasLibrary f{};
  bind(library, "cublasCreate_v2", f.create);
  bind(library, "cublasDestroy_v2", f.destroy);
  bind(library, "cublasDgemm_v2", f.dgemm);
  bind(library, "cublasDgemmStridedBatched", f.dgemmStridedBatched);
  bind(library, "cublasSetStream_v2", f.setStream);
  bind(library, "cublasSetWorkspace_v2", f.setWorkspace);
  return f;
}
} // namespace

const CublasLibrary& cublasLibrary()
{
  // A failed open is retried by the next call (std::call_once rethrows and
  // stays unfinished), so its reason reaches every caller.
  static std::once_flag once;
  static CublasLibrary functions{};
  std::call_once(once, [] { functions = open(); });
  return functions;
}
}
}
