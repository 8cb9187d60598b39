#!/bin/sh
# Installs, on Debian 12, whatever TopoVox needs to build and test that is not
# there yet (ParaView 5.11 and the -dev packages its CMake config needs, MPI,
# Xvfb, the Python oracles). Run as root (or with sudo available).
# The package list is the one checked in docs/paraview-5.11-on-debian notes.
set -eu

packages="cmake ninja-build g++ pkg-config git zlib1g-dev
paraview paraview-dev python3-paraview
qtbase5-dev qttools5-dev libqt5svg5-dev libqt5opengl5-dev qtxmlpatterns5-dev-tools
libutfcpp-dev libexpat1-dev libeigen3-dev libfreetype-dev libgdal-dev libgl2ps-dev
libglew-dev libhdf5-openmpi-dev libjpeg-dev liblz4-dev liblzma-dev libxml2-dev
libopenmpi-dev libnetcdf-dev libpng-dev python3-dev libtheora-dev libtiff-dev
libx11-dev libxt-dev libdouble-conversion-dev libavcodec-dev libavformat-dev
libavutil-dev libswscale-dev libboost-dev python3-mpi4py libgl-dev
libphat-dev libgudhi-dev
openmpi-bin xvfb xauth clang libclang-rt-14-dev
python3-numpy python3-scipy python3-skimage python3-gudhi python3-pot python3-pip"

SUDO=""
if [ "$(id -u)" != "0" ]; then
  SUDO="sudo"
fi

# Oracles that Debian does not package, for the Python that pvpython embeds.
pypi_oracles() {
  if ! /usr/bin/python3 -c "import cripser" 2>/dev/null; then
    echo "install-dependencies: installing cripser (PyPI) for /usr/bin/python3"
    $SUDO /usr/bin/python3 -m pip install --quiet --break-system-packages cripser
  fi
}

missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  echo "install-dependencies: every Debian package is installed"
  pypi_oracles
  exit 0
fi
echo "install-dependencies: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
pypi_oracles
