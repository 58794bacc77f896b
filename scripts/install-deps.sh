#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs every Debian 12 package Transformer Studio needs to build, test and run.
# Debian packages only; nothing is downloaded from anywhere else.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
source "$(dirname "$0")/packages.sh"
PACKAGES=("${HEADLESS_PACKAGES[@]}" "${DESKTOP_PACKAGES[@]}")
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
