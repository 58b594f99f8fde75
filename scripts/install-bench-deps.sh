#!/usr/bin/env bash
# Installs what `npm run bench` compares against (snapserver and snapclient, Debian packages) when missing.
# Needs root; without it the snapserver comparison is skipped with a message and everything else still runs.
set -uo pipefail
need=()
command -v snapserver >/dev/null 2>&1 || need+=(snapserver)
command -v snapclient >/dev/null 2>&1 || need+=(snapclient)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: ${need[*]} not installed and not root: the snapserver comparison will be skipped" >&2
  exit 0
fi
echo "bench: installing ${need[*]} for the peer comparison"
apt-get update -qq >/dev/null 2>&1
# --no-install-recommends keeps avahi out: nothing may be announced on the network from here.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  echo "bench: could not install ${need[*]}: the snapserver comparison will be skipped" >&2
# The packages' own services must not run: the benchmark starts its own instances on 127.0.0.1.
systemctl disable --now snapserver snapclient >/dev/null 2>&1 || true
pkill -x snapserver >/dev/null 2>&1 || true
pkill -x snapclient >/dev/null 2>&1 || true
exit 0
