# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian packages the project builds with, sourced by scripts/install-deps.sh (Debian 12, everything)
# and scripts/check-libtorch2.sh (Debian 13, the headless part). The names are the same in both releases.

# Core, the CLI and their tests (-DBUILD_GUI=OFF).
HEADLESS_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-openmp libgloo-dev
  libsentencepiece-dev libicu-dev libopencc-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libsqlite3-dev libsqlitecpp-dev libssl-dev
  libgtest-dev libgmock-dev
  libonnx-dev  # export --format onnx builds the graphs with ONNX's C++ library (optional: without it, refused)
  python3  # the malformed-input test holds a database lock from another process with it
  clang-format  # .ci/run checks the C++ format (scripts/format.sh --check)
)
# The desktop app, its tests, packaging checks, and the LibTorch 2.x check's root.
DESKTOP_PACKAGES=(
  googletest
  dpkg-dev file desktop-file-utils appstream man-db
  qt6-base-dev libqcustomplot-dev libqcustomplot2.1-qt6
  xvfb xauth fonts-noto-cjk
  debootstrap  # scripts/check-libtorch2.sh builds and tests in a Debian 13 root with LibTorch 2.6
)
# The ONNX test (tests/cli/onnx_test.sh) runs examples/onnx/translate.js in Node.js; scripts/install-deps.sh
# installs these only where `node` or `npm` is missing (NodeSource's nodejs carries its own npm and conflicts
# with Debian's npm package), then onnxruntime-node from the npm registry.
NODE_PACKAGES=(nodejs npm)
