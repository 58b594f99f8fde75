#!/usr/bin/env bash
# Installs what `npm run bench` needs from Debian when missing: wrk (the native HTTP load generator), strace (the idle
# section's system-call count), valgrind (callgrind, for bench:icount) and the snapserver/snapclient peer comparison.
# Needs root; without it the missing parts are named and skipped.
set -uo pipefail
need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v callgrind_control >/dev/null 2>&1 || need+=(valgrind)
command -v snapserver >/dev/null 2>&1 || need+=(snapserver)
command -v snapclient >/dev/null 2>&1 || need+=(snapclient)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: ${need[*]} not installed and not root: install them with apt-get (the http section needs wrk; the snapserver comparison is skipped)" >&2
  exit 0
fi
echo "bench: installing ${need[*]}"
apt-get update -qq >/dev/null 2>&1
# --no-install-recommends keeps avahi out: nothing may be announced on the network from here.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
  # One at a time, so a missing snapcast package does not keep wrk out.
  for pkg in "${need[@]}"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
      echo "bench: could not install $pkg: the sections that need it will say so" >&2
  done
}
# The snapcast packages' own services must not run: the benchmark starts its own instances on 127.0.0.1.
systemctl disable --now snapserver snapclient >/dev/null 2>&1 || true
pkill -x snapserver >/dev/null 2>&1 || true
pkill -x snapclient >/dev/null 2>&1 || true
exit 0
