#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs every Debian 12 package Transformer Studio needs to build, test and run, then the one download
# from outside Debian: onnxruntime-node from the npm registry, which the ONNX test needs (below).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
source "$(dirname "$0")/packages.sh"
PACKAGES=("${HEADLESS_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}")
$SUDO apt-get update -qq
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then PACKAGES+=("${NODE_PACKAGES[@]}"); fi
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
# onnxruntime-node 1.30.0 (pinned by examples/onnx/package.json and package-lock.json) into
# examples/onnx/node_modules (git ignores it): the ONNX test (tests/cli/onnx_test.sh) runs the exported graphs
# in it, and skips without it. This is the only thing fetched from the npm registry. --ignore-scripts: its
# install script downloads GPU libraries from elsewhere; the CPU runtime for Linux x64 is in the package.
# Without the registry (offline), everything else still builds and runs; the ONNX test then says it is skipped.
if ! (cd "$(dirname "$0")/../examples/onnx" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error); then
  echo "warning: onnxruntime-node could not be installed from the npm registry; the ONNX Runtime test will be skipped" >&2
fi
