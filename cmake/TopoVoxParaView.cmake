# The VTK/ParaView half of the build: the TopoVox::Filters VTK module (with
# Python wrapping, for pvpython and plain VTK Python), the ParaView plugin,
# a CMake package for VTK C++ programs, and the tests that need VTK.
find_package(ParaView 5.11 REQUIRED)
if(NOT TOPOVOX_WITH_PHAT)
  message(FATAL_ERROR "The ParaView plugin needs PHAT (Debian: libphat-dev) for persistence")
endif()
if(NOT PARAVIEW_USE_PYTHON)
  message(FATAL_ERROR "TopoVox needs a ParaView built with Python (Debian: python3-paraview)")
endif()

# A loadable plugin and wrappable modules must be shared libraries.
set(BUILD_SHARED_LIBS ON)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_BINDIR}")
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}")
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}")

set(TOPOVOX_CMAKE_DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/TopoVox")

# 1. The VTK module, built as an ordinary shared module first so that Python
#    wrapping works from pvpython (see the notes on ParaView 5.11).
vtk_module_scan(
  MODULE_FILES     "${CMAKE_CURRENT_SOURCE_DIR}/Filters/vtk.module"
  REQUEST_MODULES  TopoVox::Filters
  PROVIDES_MODULES topovox_modules
  ENABLE_TESTS     OFF)
vtk_module_build(
  MODULES             ${topovox_modules}
  INSTALL_EXPORT      TopoVoxTargets
  HEADERS_DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/topovox"
  CMAKE_DESTINATION   "${TOPOVOX_CMAKE_DESTINATION}"
  VERSION             "${PROJECT_VERSION}")

vtk_module_python_default_destination(TOPOVOX_PYTHON_DESTINATION)
vtk_module_wrap_python(
  MODULES             ${topovox_modules}
  INSTALL_EXPORT      TopoVoxPythonTargets
  PYTHON_PACKAGE      "topovox"
  MODULE_DESTINATION  "${TOPOVOX_PYTHON_DESTINATION}"
  LIBRARY_DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  CMAKE_DESTINATION   "${TOPOVOX_CMAKE_DESTINATION}"
  INSTALL_HEADERS     OFF
  TARGET              TopoVox::Python
  BUILD_STATIC        OFF)
# `import topovox` needs a package __init__ that loads the wrapped module.
set(topovox_python_init "${CMAKE_BINARY_DIR}/${TOPOVOX_PYTHON_DESTINATION}/topovox/__init__.py")
file(WRITE "${topovox_python_init}"
  "\"\"\"TopoVox: GPU topology of images for VTK and ParaView.\"\"\"\nfrom .TopoVoxFilters import *\n")
install(FILES "${topovox_python_init}" DESTINATION "${TOPOVOX_PYTHON_DESTINATION}/topovox")
# topovox.views: the diagram, barcode and curve views (Representations/).
configure_file(Representations/topovox_views.py
  "${CMAKE_BINARY_DIR}/${TOPOVOX_PYTHON_DESTINATION}/topovox/views.py" COPYONLY)
install(FILES Representations/topovox_views.py DESTINATION "${TOPOVOX_PYTHON_DESTINATION}/topovox" RENAME views.py)
# The GUI macro users import (Macros > Import new macro...).
install(FILES "Representations/macros/TopoVox Follow Selection.py" DESTINATION "${CMAKE_INSTALL_DATADIR}/topovox/macros")

# 2. The ParaView plugin (Plugin/ lists the module and the XML proxies).
paraview_plugin_scan(
  PLUGIN_FILES      "${CMAKE_CURRENT_SOURCE_DIR}/Plugin/paraview.plugin"
  PROVIDES_PLUGINS  topovox_plugins
  ENABLE_BY_DEFAULT ON)
paraview_plugin_build(
  RUNTIME_DESTINATION  "${CMAKE_INSTALL_BINDIR}"
  LIBRARY_DESTINATION  "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY_SUBDIRECTORY "paraview-${ParaView_VERSION_MAJOR}.${ParaView_VERSION_MINOR}/plugins"
  PLUGINS              ${topovox_plugins}
  TARGET               TopoVox::Plugins)

# 3. find_package(TopoVox) for VTK C++ programs.
install(EXPORT TopoVoxKernelsTargets NAMESPACE TopoVox:: DESTINATION "${TOPOVOX_CMAKE_DESTINATION}")
include(CMakePackageConfigHelpers)
configure_package_config_file(cmake/TopoVoxConfig.cmake.in
  "${CMAKE_BINARY_DIR}/TopoVoxConfig.cmake"
  INSTALL_DESTINATION "${TOPOVOX_CMAKE_DESTINATION}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/TopoVoxConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/TopoVoxConfig.cmake" "${CMAKE_BINARY_DIR}/TopoVoxConfigVersion.cmake"
  DESTINATION "${TOPOVOX_CMAKE_DESTINATION}")

if(BUILD_TESTING)
  add_subdirectory(Testing)
endif()
