#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders the app icon (resources/icons/transformer-studio.svg) into the PNG sizes the freedesktop
# icon theme wants, committed under packaging/icons/. Run after changing the SVG; needs
# rsvg-convert (Debian: librsvg2-bin), which the build itself does not.
set -euo pipefail
cd "$(dirname "$0")/.."
for size in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$size" -h "$size" resources/icons/transformer-studio.svg -o "packaging/icons/transformer-studio-$size.png"
done
ls -l packaging/icons
