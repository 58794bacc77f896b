#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the headless part (core, the CLI and their tests; -DBUILD_GUI=OFF) against LibTorch 2.x and
# runs its tests: Debian 13 (trixie)'s libtorch-dev 2.6, in a trixie root made with debootstrap from
# Debian's package registry. Debian 12's LibTorch 1.13 is what scripts/build-and-test.sh builds
# against; CI (.ci/run) runs both, so neither generation can break unseen.
#
# It also fails on any compiler warning and on a LibTorch warning in a bf16
# training log (deprecated calls warn on every use in 2.x).
#
#   bash scripts/check-libtorch2.sh            # needs root (or sudo) for debootstrap and chroot
#   TS_DEBIAN_SUITE=sid bash scripts/check-libtorch2.sh   # the newest LibTorch Debian has (unstable)
#
# The root is kept between runs (TS_TRIXIE_ROOT, default ~/.cache/transformer-studio/trixie-root, or
# <suite>-root for another suite; about 2 GB) with a ccache inside it, so a second run rebuilds only
# what changed. Environment: TS_DEBIAN_SUITE (default trixie, what CI checks), TS_TRIXIE_ROOT,
# DEBIAN_MIRROR (default http://deb.debian.org/debian), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCE=$PWD
SUITE=${TS_DEBIAN_SUITE:-trixie}
case "$SUITE" in
  trixie | forky | sid | unstable | testing) ;;
  *)
    echo "check-libtorch2: TS_DEBIAN_SUITE=$SUITE: expected trixie, forky, testing, sid or unstable" >&2
    exit 2
    ;;
esac
ROOT=${TS_TRIXIE_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/transformer-studio/$SUITE-root}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
JOBS=${JOBS:-$(nproc)}
# debootstrap, chroot and mount need root.
if [ "$(id -u)" -ne 0 ]; then exec sudo -E bash "$0" "$@"; fi
# What core and the CLI build and test with, from the suite (the names are the same in trixie and sid).
source "$SOURCE/scripts/packages.sh"
PACKAGES=("${HEADLESS_PACKAGES[@]}")
# SentencePiece 0.2.2 (sid, 2026; not 0.2.0 in Debian 13) includes abseil's headers from its own,
# and Debian's libsentencepiece-dev does not depend on them.
if [ "$SUITE" != trixie ]; then PACKAGES+=(libabsl-dev); fi
step() { printf '\n== check-libtorch2: %s\n' "$*"; }

if ! command -v debootstrap > /dev/null; then
  echo "check-libtorch2: debootstrap is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi

# 1. The root, made once; the package list is re-applied when it changes.
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  step "debootstrap $SUITE into $ROOT"
  rm -rf "$ROOT"
  mkdir -p "$ROOT"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR"
fi
wanted="${PACKAGES[*]}"
if [ "$(cat "$ROOT/.ts-packages" 2> /dev/null || true)" != "$wanted" ]; then
  step "install the build dependencies in the root"
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  # sid's and testing's Release files expire within days; a mirror that lags (or a clock ahead of it)
  # would then refuse them. This root only builds and tests, so an expired date is not a reason to stop.
  echo 'Acquire::Check-Valid-Until "false";' > "$ROOT/etc/apt/apt.conf.d/99ts-valid-until"
  chroot "$ROOT" apt-get update -qq
  chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" > /dev/null
  chroot "$ROOT" apt-get clean
  echo "$wanted" | tee "$ROOT/.ts-packages" > /dev/null
fi

# 2. The working tree (tracked files and untracked ones git does not ignore) into /src. Only files whose
#    content changed are written (with a new time), and files gone are removed, so the build in /build
#    recompiles exactly what changed, whatever the files' own times say.
step "update $ROOT/src from the working tree"
stage=$(mktemp -d)
if git -C "$SOURCE" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  git -C "$SOURCE" ls-files -z --cached --others --exclude-standard |
    (cd "$SOURCE" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh) |
    tar -C "$SOURCE" --null -T - -cf - | tar -C "$stage" -xf -
else
  tar -C "$SOURCE" --exclude=./build --exclude='./build-*' --exclude=./.device-kit -cf - . | tar -C "$stage" -xf -
fi
mkdir -p "$ROOT/src"
changed=0
while IFS= read -r -d '' f; do
  if ! cmp -s "$stage/$f" "$ROOT/src/$f"; then
    mkdir -p "$(dirname "$ROOT/src/$f")"
    cp "$stage/$f" "$ROOT/src/$f"
    changed=$((changed + 1))
  fi
done < <(cd "$stage" && find . -type f -print0)
while IFS= read -r -d '' f; do
  [ -e "$stage/$f" ] || rm -f "$ROOT/src/$f"
done < <(cd "$ROOT/src" && find . -type f -print0)
rm -rf "$stage"
echo "$changed files new or changed"

# 3. /proc for the tests (CPU flags, thread counts); unmounted however this script ends.
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2> /dev/null || true; done
}
trap cleanup EXIT
mount -t proc proc "$ROOT/proc" && mounted+=("$ROOT/proc")
if mount --bind /sys "$ROOT/sys" 2> /dev/null; then mounted+=("$ROOT/sys"); fi

in_root() {
  chroot "$ROOT" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 CCACHE_DIR=/root/.ccache TERM=dumb CI="${CI:-}" bash -c "$1"
}

# The version macros: torch/version.h up to 2.x, torch/headeronly/version.h (which it includes) later.
step "LibTorch $(in_root "cat /usr/include/torch/csrc/api/include/torch/version.h /usr/include/torch/headeronly/version.h 2> /dev/null |
  sed -n 's/^#define TORCH_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' | paste -sd.")"
step "configure and build (headless)"
in_root "cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON -DBUILD_GUI=OFF \
           -DTS_BUILD_BENCH=OFF > /build-configure.log 2>&1 || { cat /build-configure.log; exit 1; }"
in_root "set -o pipefail; cmake --build /build -j $JOBS 2>&1 | tee /build.log | { grep -v '^\[' || true; }"
# No warnings: the same code must build cleanly on both generations (a warning that LibTorch's or
# the C++ library's headers raise inside our code counts too, and is silenced where it arises).
if grep -q 'warning:' "$ROOT/build.log"; then
  echo "check-libtorch2: the build warns:" >&2
  grep -B12 -A3 'warning:' "$ROOT/build.log" >&2
  exit 1
fi

step "tests: core, text, CLI"
# package_deb needs the desktop app; everything else of the headless build runs.
in_root "ctest --test-dir /build --output-on-failure -j $JOBS --timeout 900 -E '^package_deb$'"

step "LibTorch 2.x: passed"
