#!/usr/bin/env bash
# Proves azcd on real Debian userlands: builds throw-away debootstrap roots, runs `npm ci` from the lockfile with
# Debian's own Node and npm, builds, and runs scripts/platform-smoke.mjs (start, API + event stream, idle RSS, stop).
#
# usage: sudo npm run test:platforms [-- TARGET...]      (root: debootstrap, chroot and mounts need it)
#   TARGET: trixie-arm64 (Raspberry Pi OS path, Debian's Node 20, under qemu-user), trixie-armhf (32-bit Pi OS path:
#           armv7, under qemu-user), sid-amd64 (Debian's Node 24), or any SUITE-ARCH pair Debian has;
#           default: trixie-arm64 sid-amd64.
# environment:
#   AZC_PLATFORMS_DIR   where the roots live (default /var/tmp/azc-platforms; never inside the repository)
#   DEBIAN_MIRROR       Debian mirror (default: the first deb.debian.org-style URI in /etc/apt/sources.list*)
#   AZC_PLATFORMS_SUITE=1  also run the test suite (npx tap) in roots of the host architecture
# Needs on the host: debootstrap, and for foreign architectures qemu-user-static + binfmt-support (binfmt_misc
# mounted). Only Debian's mirror and the npm registry are contacted. Node headers come from Debian's libnode-dev
# (npm_config_nodedir=/usr), so node-gyp never downloads them. A root is reused while its marker file exists, and
# `npm ci` is skipped while the locked packages are unchanged since the last successful one in that root.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${AZC_PLATFORMS_DIR:-/var/tmp/azc-platforms}"
PACKAGES="nodejs npm libnode-dev build-essential python3 ca-certificates procps"
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(trixie-arm64 sid-amd64)

die() { echo "test-platforms: $*" >&2; exit 1; }
say() { echo "test-platforms: [$(date -u +%H:%M:%S)] $*"; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot and mounts need it): sudo npm run test:platforms"
# The host tools come from Debian's packages, installed here when missing (never by hand).
host_tools=()
command -v debootstrap >/dev/null || host_tools+=(debootstrap)
{ [ -x /usr/bin/qemu-aarch64-static ] && [ -x /usr/bin/qemu-arm-static ]; } || host_tools+=(qemu-user-static)
command -v update-binfmts >/dev/null || host_tools+=(binfmt-support)
if [ ${#host_tools[@]} -gt 0 ]; then
  echo "installing host tools: ${host_tools[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${host_tools[@]}" \
    || die "could not install ${host_tools[*]}"
fi
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
update-binfmts --enable >/dev/null 2>&1 || true
case "$(realpath -m "$DIR")/" in "$REPO"/*) die "AZC_PLATFORMS_DIR must be outside the repository ($REPO)";; esac

if [ -z "${DEBIAN_MIRROR:-}" ]; then
  DEBIAN_MIRROR="$(grep -rhoE '(URIs:|deb)\s+https?://[^ ]+/debian/?(\s|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | grep -oE 'https?://[^ ]+' | head -n1 || true)"
  DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
fi

host_arch="$(dpkg --print-architecture)"
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  mounted=()
}
trap cleanup EXIT

mount_into() { # root
  local root="$1" what
  for what in proc sys dev dev/pts; do
    mountpoint -q "$root/$what" && continue
    mkdir -p "$root/$what"
    case "$what" in
      proc) mount -t proc proc "$root/proc" ;;
      sys) mount -t sysfs sys "$root/sys" ;;
      *) mount --bind "/$what" "$root/$what" ;;
    esac
    mounted+=("$root/$what")
  done
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  # Certificate authorities this host was told to trust (a TLS-inspecting proxy in front of the registry, say).
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1 && [ -x "$root/usr/sbin/update-ca-certificates" ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
  fi
}

in_root() { # root command...
  local root="$1"
  shift
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_nodedir=/usr JOBS=max npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false "$@"
}

make_root() { # suite arch root
  local suite="$1" arch="$2" root="$3" start
  if [ -f "$root/.azc-root-ready" ]; then
    say "$suite/$arch: reusing $root"
    return
  fi
  if [ "$arch" != "$host_arch" ] && ! ls /proc/sys/fs/binfmt_misc/ 2>/dev/null | grep -q "^qemu-"; then
    die "no qemu binfmt handlers: apt-get install qemu-user-static binfmt-support, and mount binfmt_misc"
  fi
  rm -rf "$root"
  start=$SECONDS
  say "$suite/$arch: debootstrap from $DEBIAN_MIRROR into $root"
  # A minimal base, then apt: debootstrap's own resolver trips over Node's many small packages in unstable.
  debootstrap --arch="$arch" --variant=minbase "$suite" "$root" "$DEBIAN_MIRROR" >"$root.debootstrap.log" 2>&1 \
    || die "debootstrap failed; see $root.debootstrap.log and $root/debootstrap/debootstrap.log"
  mount_into "$root"
  # A mirror snapshot can be older than its Valid-Until date allows; the archive signature is still checked.
  in_root "$root" apt-get -o Acquire::Check-Valid-Until=false update -q
  in_root "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES
  mount_into "$root" # now that update-ca-certificates exists there
  touch "$root/.azc-root-ready"
  say "$suite/$arch: root ready in $((SECONDS - start)) s"
}

copy_repo() { # root
  # Tracked and new files only: never node_modules, dist or native builds from this machine.
  local dest="$1/srv/azc"
  mkdir -p "$dest"
  (cd "$REPO" && git ls-files -z -co --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
    | tar --null -T - -cf -) | tar -C "$dest" -xf -
}

run_target() { # suite-arch
  local suite="${1%-*}" arch="${1##*-}" root="$DIR/$1" start lockhash node npm took
  make_root "$suite" "$arch" "$root"
  mount_into "$root"
  copy_repo "$root"
  node="$(in_root "$root" node --version)"
  npm="$(in_root "$root" npm --version)"
  say "$1: Node $node, npm $npm, glibc $(in_root "$root" ldd --version | head -n1 | grep -oE '[0-9.]+$')"

  # What npm ci installs: the locked packages and which of them may run scripts (not the root's own metadata).
  lockhash="$(in_root "$root" node -e '
    const lock = require("/srv/azc/package-lock.json"), pkg = require("/srv/azc/package.json");
    const { "": _root, ...packages } = lock.packages;
    process.stdout.write(require("crypto").createHash("sha256").update(JSON.stringify([packages, pkg.allowScripts])).digest("hex"));')"
  if [ -d "$root/srv/azc/node_modules" ] && [ "$(cat "$root/srv/azc/.azc-ci-lock" 2>/dev/null)" = "$lockhash" ]; then
    say "$1: npm ci skipped (locked packages unchanged since the $(cat "$root/srv/azc/.azc-ci-took" 2>/dev/null || echo '?') s install)"
  else
    rm -f "$root/srv/azc/.azc-ci-lock"
    say "$1: npm ci (log: $root.npm-ci.log)"
    start=$SECONDS
    in_root "$root" sh -c 'cd /srv/azc && npm ci --foreground-scripts' >"$root.npm-ci.log" 2>&1 \
      || { tail -n 40 "$root.npm-ci.log"; die "$1: npm ci failed; see $root.npm-ci.log"; }
    took=$((SECONDS - start))
    echo "$lockhash" >"$root/srv/azc/.azc-ci-lock"
    echo "$took" >"$root/srv/azc/.azc-ci-took"
    say "$1: npm ci took $took s"
  fi
  # Every native part must have been built (or fetched) for this Node: npm 12 skips scripts it was not allowed.
  in_root "$root" sh -c 'cd /srv/azc && node -e "
    require(\"better-sqlite3\")(\":memory:\").close();
    require(\"@serialport/bindings-cpp/dist/load-bindings.js\");
    console.log(\"native: better-sqlite3 and serialport bindings load\")"' \
    || die "$1: a native dependency did not build for Node $node (see $root.npm-ci.log)"
  [ -f "$root/srv/azc/native/build/Release/azc_notify.node" ] \
    || die "$1: the sd_notify addon in native/ was not built (see $root.npm-ci.log)"

  say "$1: build"
  start=$SECONDS
  in_root "$root" sh -c 'cd /srv/azc && npm run build' >"$root.build.log" 2>&1 \
    || { tail -n 40 "$root.build.log"; die "$1: npm run build failed; see $root.build.log"; }
  say "$1: build took $((SECONDS - start)) s; smoke"
  in_root "$root" sh -c 'cd /srv/azc && node scripts/platform-smoke.mjs' | tee "$root.smoke.log"
  grep -q '^platform-smoke: PASS' "$root.smoke.log" || die "$1: smoke failed"

  if [ "${AZC_PLATFORMS_SUITE:-0}" = 1 ] && [ "$arch" = "$host_arch" ]; then
    say "$1: test suite (log: $root.tap.log)"
    in_root "$root" sh -c 'cd /srv/azc && npx tsc --noEmit && npx tap --disable-coverage' >"$root.tap.log" 2>&1 \
      || { tail -n 60 "$root.tap.log"; die "$1: the test suite failed; see $root.tap.log"; }
    tail -n 8 "$root.tap.log"
  fi
  cleanup
  say "$1: PASS"
}

mkdir -p "$DIR"
passed=()
for target in "${TARGETS[@]}"; do
  [[ "$target" == *-* ]] || die "target '$target' is not SUITE-ARCH (e.g. trixie-arm64)"
  run_target "$target"
  passed+=("$target")
done
say "passed: ${passed[*]}"
