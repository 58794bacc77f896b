#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs every Debian 12 package Transformer Studio needs to build, test and run.
# Debian packages only; nothing is downloaded from anywhere else.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-openmp libgloo-dev
  libsentencepiece-dev libicu-dev libopencc-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsqlite3-dev libsqlitecpp-dev libssl-dev
  dpkg-dev file desktop-file-utils appstream man-db
  libgtest-dev libgmock-dev googletest
  qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6
  xvfb xauth fonts-noto-cjk
  python3  # the malformed-input test holds a database lock from another process with it
  debootstrap  # scripts/check-libtorch2.sh builds and tests in a Debian 13 root with LibTorch 2.6
)
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
