#!/usr/bin/env bash
# Proves a fresh install on a booted Debian: systemd/install.sh, run by the image's sudo user, installs Node and the
# compiler from apt, asks for the amplifier (a Monoprice emulator on a serial line), and azcd runs under systemd.
#
# usage: sudo npm run test:install      (root: debootstrap, overlay mounts and systemd-nspawn need it)
# environment:
#   AZC_INSTALL_DIR  where the base root and the last run live (default /var/tmp/azc-install; outside the repository)
#   DEBIAN_MIRROR    Debian mirror (default: the first deb.debian.org-style URI in /etc/apt/sources.list*)
#
# What it does: debootstraps a Debian trixie amd64 root once (systemd as init, sudo, ca-certificates and a `pi` user
# with passwordless sudo, as on a Raspberry Pi OS image; no Node, npm or compiler), then for every run boots a fresh
# overlay of it with `systemd-nspawn --boot` on the host's network, puts a clean `git archive HEAD` of this repository
# into /home/pi, and starts the Monoprice emulator on the host; its pseudo-terminal appears in the container as
# /dev/serial/by-id/usb-Emulated_Monoprice_MPR-6ZHMAUT-if00-port0 (group dialout, as udev would leave a USB adapter).
# Then `sudo systemd/install.sh` runs under script(1) and gets its answers when it asks (driver, port number), and the
# service is checked: the casting receivers installed with their own services masked and Avahi running; Type=notify and active, /api/health with the driver online, /api/zones with the first admin's
# key, the service user in dialout, restart and a clean stop. The container is powered off at the end; the last run's
# tree and logs stay in $AZC_INSTALL_DIR/run until the next run. Every wait is bounded.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${AZC_INSTALL_DIR:-/var/tmp/azc-install}"
SUITE=trixie
ARCH=amd64
BASE="$DIR/base-$SUITE-$ARCH"
RUN="$DIR/run"
ROOT="$RUN/root"
# What a fresh Raspberry Pi OS Lite image has that a minimal Debian lacks; never nodejs, npm or build-essential.
BASE_PACKAGES=systemd-sysv,dbus,sudo,ca-certificates,procps
BY_ID=/dev/serial/by-id/usb-Emulated_Monoprice_MPR-6ZHMAUT-if00-port0
EMULATOR_UNITS=1
ZONES_PER_UNIT=6
# Bounds (seconds). Generous for a shared 2-core machine; a hang still ends the run with a FAIL.
BOOT_TIMEOUT=180
PROMPT_TIMEOUT=1200
INSTALL_TIMEOUT=2400
SERVICE_TIMEOUT=150
POWEROFF_TIMEOUT=60
CT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "test-install: $*" >&2; exit 1; }
say() { echo "test-install: [$(date -u +%H:%M:%S)] $*"; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, mounts and systemd-nspawn need it): sudo npm run test:install"
[ "$(dpkg --print-architecture)" = "$ARCH" ] || die "this proof boots an $ARCH root natively; the host is $(dpkg --print-architecture)"
case "$(realpath -m "$DIR")/" in "$REPO"/*) die "AZC_INSTALL_DIR must be outside the repository ($REPO)";; esac
command -v node >/dev/null && [ -x "$REPO/node_modules/.bin/tsx" ] \
  || die "the emulator runs on the host from this checkout: needs node and npm ci in $REPO"
# Host tools from Debian's packages, installed here when missing (never by hand).
host_tools=()
command -v debootstrap >/dev/null || host_tools+=(debootstrap)
command -v systemd-nspawn >/dev/null || host_tools+=(systemd-container)
command -v socat >/dev/null || host_tools+=(socat)
command -v script >/dev/null || host_tools+=(bsdutils)
if [ ${#host_tools[@]} -gt 0 ]; then
  say "installing host tools: ${host_tools[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${host_tools[@]}" \
    || die "could not install ${host_tools[*]}"
fi
if [ -z "${DEBIAN_MIRROR:-}" ]; then
  DEBIAN_MIRROR="$(grep -rhoE '(URIs:|deb)\s+https?://[^ ]+/debian/?(\s|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | grep -oE 'https?://[^ ]+' | head -n1 || true)"
  DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
fi

# --- Results and phase times ---------------------------------------------------------------------------------
checks=()
failed=0
phases=()
check() { # name condition-status detail
  if [ "$2" = 0 ]; then checks+=("PASS  $1${3:+: $3}"); else checks+=("FAIL  $1${3:+: $3}"); failed=1; fi
  say "${checks[-1]}"
}
phase() { phases+=("$(printf '%-34s %5s s' "$1" "$2")"); say "phase: $1 took $2 s"; }
summary() {
  echo
  echo "test-install: phases"
  local line
  for line in "${phases[@]}"; do echo "  $line"; done
  echo "test-install: checks"
  for line in "${checks[@]}"; do echo "  $line"; done
  echo "test-install: logs in $RUN"
  if [ "$failed" = 0 ] && [ ${#checks[@]} -gt 0 ]; then echo "test-install: PASS"; else echo "test-install: FAIL"; fi
}

# --- Teardown: every process this run started, by its id -------------------------------------------------------
NSPAWN_PID=
LEADER=
EMULATOR_PID=
INSTALL_PID=
finish() {
  local code=$?
  set +e
  [ -n "$INSTALL_PID" ] && kill "$INSTALL_PID" 2>/dev/null
  if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
    say "powering off the container"
    [ -n "$LEADER" ] && timeout 20 nsenter -t "$LEADER" -a env -i PATH="$CT_PATH" systemctl poweroff >/dev/null 2>&1
    if ! timeout "$POWEROFF_TIMEOUT" tail --pid="$NSPAWN_PID" -f /dev/null; then
      say "container did not power off within $POWEROFF_TIMEOUT s; terminating systemd-nspawn ($NSPAWN_PID)"
      kill "$NSPAWN_PID"; timeout 20 tail --pid="$NSPAWN_PID" -f /dev/null || kill -9 "$NSPAWN_PID"
      failed=1
      checks+=("FAIL  container powers off within $POWEROFF_TIMEOUT s")
    fi
  fi
  if [ -n "$EMULATOR_PID" ] && kill -0 "$EMULATOR_PID" 2>/dev/null; then
    kill "$EMULATOR_PID"; timeout 10 tail --pid="$EMULATOR_PID" -f /dev/null || kill -9 "$EMULATOR_PID"
  fi
  mountpoint -q "$ROOT" && umount "$ROOT"
  [ "$code" = 0 ] || failed=1
  summary
  [ "$failed" = 0 ] && exit 0 || exit 1
}

# --- The base image: debootstrapped once, never changed by a run --------------------------------------------
make_base() {
  local start=$SECONDS
  if [ -f "$BASE/.azc-root-ready" ]; then
    say "reusing $BASE (debootstrapped in $(cat "$BASE/.azc-root-ready") s; delete it for a new one)"
    return
  fi
  rm -rf "$BASE"
  say "debootstrap $SUITE/$ARCH from $DEBIAN_MIRROR into $BASE"
  debootstrap --arch="$ARCH" --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$BASE" "$DEBIAN_MIRROR" \
    >"$DIR/debootstrap.log" 2>&1 || die "debootstrap failed; see $DIR/debootstrap.log"
  # The image's user, as Raspberry Pi OS makes it: in sudo (no password) and the hardware groups.
  chroot "$BASE" useradd -m -s /bin/bash -G sudo,adm,dialout,audio,plugdev,users pi
  echo 'pi ALL=(ALL) NOPASSWD: ALL' >"$BASE/etc/sudoers.d/010_pi-nopasswd"
  chmod 0440 "$BASE/etc/sudoers.d/010_pi-nopasswd"
  echo raspberrypi >"$BASE/etc/hostname"
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\traspberrypi\n' >"$BASE/etc/hosts"
  # Certificate authorities this host was told to trust (a TLS-inspecting proxy in front of the registry): the
  # system store gets them, and sudo keeps NODE_EXTRA_CA_CERTS (set for pi's session below) so npm trusts them too.
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$BASE/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$BASE/usr/local/share/ca-certificates/"
    chroot "$BASE" update-ca-certificates >/dev/null
    echo 'Defaults env_keep += "NODE_EXTRA_CA_CERTS"' >"$BASE/etc/sudoers.d/020_extra-ca"
    chmod 0440 "$BASE/etc/sudoers.d/020_extra-ca"
  fi
  echo "$((SECONDS - start))" >"$BASE/.azc-root-ready"
  phase "debootstrap (base image)" "$((SECONDS - start))"
}

# --- Helpers for the running container ----------------------------------------------------------------------
in_ct() { # timeout-seconds command...: runs in the container's namespaces with a clean environment, as root
  local limit="$1"
  shift
  timeout "$limit" nsenter -t "$LEADER" -a env -i PATH="$CT_PATH" LANG=C.UTF-8 "$@"
}
unit_prop() { in_ct 20 systemctl show azcd.service -P "$1"; }
wait_for_text() { # file text seconds: true once the file contains the text (fixed string)
  local end=$((SECONDS + $3))
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $end ] || return 1
    [ -z "$INSTALL_PID" ] || kill -0 "$INSTALL_PID" 2>/dev/null || { grep -qF -- "$2" "$1"; return; }
    sleep 1
  done
}
stamp_of() { # pattern (extended regexp): seconds since the install started when a line first matched it
  local at
  at="$(grep -m1 -E -- "$1" "$RUN/install.stamped" 2>/dev/null | cut -d'|' -f1)"
  [ -n "$at" ] && echo $((at - INSTALL_EPOCH))
}

trap finish EXIT
mkdir -p "$DIR"
make_base
for tool in node npm make cc; do
  if chroot "$BASE" sh -c "command -v $tool" >/dev/null; then die "the base image has $tool; it must come from install.sh"; fi
done
check "the fresh image has no node, npm or compiler" 0

# --- A fresh overlay of the base for this run -----------------------------------------------------------------
mountpoint -q "$ROOT" && umount "$ROOT"
rm -rf "$RUN"
mkdir -p "$RUN/upper" "$RUN/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$RUN/upper,workdir=$RUN/work" "$ROOT"
# The source as a Pi owner would clone it: only committed files, owned by pi.
git -C "$REPO" archive --format=tar --prefix=audio-zone-control/ HEAD | tar -C "$ROOT/home/pi" -xf -
chroot "$ROOT" chown -R pi:pi /home/pi/audio-zone-control
say "source: $(git -C "$REPO" rev-parse --short HEAD) (git archive HEAD) in /home/pi/audio-zone-control"
# The daemon shares the host's network here: listen on loopback only, on a free port, and keep SSDP on lo (mDNS is
# off on loopback). The env file is the documented place for local settings; install.sh leaves it alone.
PORT="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
mkdir -p "$ROOT/etc/azcd"
printf 'AZC_HOST=127.0.0.1\nAZC_PORT=%s\nAZC_SSDP_INTERFACES=lo\n' "$PORT" >"$ROOT/etc/azcd/azcd.env"
# install.sh installs avahi-daemon (AirPlay advertises through it) and it starts in the container, on the host's
# network: kept off every interface, it runs as the appliance needs it but sends nothing onto a network this test does
# not own (avahi-daemon waits for an allowed interface that never comes).
mkdir -p "$ROOT/etc/systemd/system/avahi-daemon.service.d" "$ROOT/etc/azc-test"
printf '[server]\nallow-interfaces=azc-none\nuse-ipv6=no\n' >"$ROOT/etc/azc-test/avahi-daemon.conf"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/avahi-daemon -s -f /etc/azc-test/avahi-daemon.conf\n' \
  >"$ROOT/etc/systemd/system/avahi-daemon.service.d/azc-test.conf"

# --- The amplifier: the Monoprice emulator on the host, its line plugged into the container -----------------
mkdir -p "$RUN/emulator"
git -C "$REPO" archive --format=tar HEAD drivers scripts test/helpers package.json | tar -C "$RUN/emulator" -xf -
ln -s "$REPO/node_modules" "$RUN/emulator/node_modules"
(cd "$RUN/emulator" && exec node --import tsx scripts/emulator-monoprice.ts --path "$RUN/ttyAMP" --units "$EMULATOR_UNITS") \
  >"$RUN/emulator.log" 2>&1 &
EMULATOR_PID=$!
wait_for_text "$RUN/emulator.log" 'emulator: ready' 30 || { cat "$RUN/emulator.log"; die "the emulator did not start"; }
PTY="$(readlink -f "$RUN/ttyAMP")"
# As udev leaves a USB serial adapter: group dialout, read-write for the group (same gid in host and image).
chgrp "$(chroot "$BASE" getent group dialout | cut -d: -f3)" "$PTY"
chmod 0660 "$PTY"
say "emulator: $EMULATOR_UNITS unit(s) on $PTY, in the container at $BY_ID"

# --- Boot -----------------------------------------------------------------------------------------------------
# --register=no --keep-unit: no machined or host systemd is needed. The image's systemd (257) wants the unified
# cgroup hierarchy, which nspawn gives it even on a hybrid host when asked. CAP_BPF and the bpf() call let it attach
# device programs, so the unit's DevicePolicy=closed is enforced as on a Pi (nspawn withholds both by default, and
# systemd then quietly allows every device).
start=$SECONDS
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --directory="$ROOT" --boot --register=no --keep-unit \
  --machine=azc-install --capability=CAP_BPF --system-call-filter=bpf --console=read-only --bind="$PTY:$BY_ID" \
  >"$RUN/console.log" 2>&1 </dev/null &
NSPAWN_PID=$!
end=$((SECONDS + BOOT_TIMEOUT))
until [ -n "$LEADER" ]; do
  for pid in $(pgrep -P "$NSPAWN_PID" || true); do
    [ "$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status" 2>/dev/null)" = 1 ] && LEADER=$pid
  done
  [ -n "$LEADER" ] && break
  kill -0 "$NSPAWN_PID" 2>/dev/null || { tail -n 30 "$RUN/console.log"; die "systemd-nspawn exited; see $RUN/console.log"; }
  [ $SECONDS -lt $end ] || die "no init process in the container after $BOOT_TIMEOUT s; see $RUN/console.log"
  sleep 1
done
state=
until [ "$state" = running ] || [ "$state" = degraded ]; do
  state="$(in_ct 10 systemctl is-system-running 2>/dev/null || true)"
  [ $SECONDS -lt $end ] || break
  sleep 1
done
check "systemd boots the image to multi-user (is-system-running)" "$([ "$state" = running ]; echo $?)" "$state"
[ "$state" = degraded ] && in_ct 10 systemctl --failed --no-pager --plain
[ "$state" = running ] || [ "$state" = degraded ] || die "the container did not finish booting; see $RUN/console.log"
phase "boot to multi-user.target" "$((SECONDS - start))"
# From here on a failed step is a FAIL line in the summary, not the end of the run.
set +e
probe="$(in_ct 30 systemd-run --wait --quiet --pipe -p DevicePolicy=strict sh -c 'echo > /dev/null && echo open' 2>&1)"
[[ "$probe" == *"Operation not permitted"* ]]
check "device policies are enforced in the container (a DevicePolicy=strict probe cannot open /dev/null)" $? "$probe"

# --- install.sh as the image's user, answering its questions when they appear --------------------------------
EXTRA_CA=()
[ -f "$BASE/etc/sudoers.d/020_extra-ca" ] && EXTRA_CA=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
mkfifo "$RUN/answers"
exec 3<>"$RUN/answers"
INSTALL_EPOCH="$(date +%s)"
# script(1) gives install.sh a terminal (it asks only on one); its output is stamped line by line for the phases.
in_ct "$INSTALL_TIMEOUT" runuser -u pi -- env -i HOME=/home/pi USER=pi LOGNAME=pi PATH="$CT_PATH" LANG=C.UTF-8 TERM=dumb \
  "${EXTRA_CA[@]}" sh -c 'cd ~/audio-zone-control && exec script -q -f -e -c "sudo systemd/install.sh" /dev/null' \
  <"$RUN/answers" >"$RUN/install.log" 2>&1 &
INSTALL_PID=$!
tail -n +1 -F --pid="$INSTALL_PID" "$RUN/install.log" 2>/dev/null | while IFS= read -r line; do printf '%s|%s\n' "$(date +%s)" "$line"; done \
  >"$RUN/install.stamped" &
STAMPER_PID=$!

answered=0
if wait_for_text "$RUN/install.log" 'Amplifier driver (' "$PROMPT_TIMEOUT"; then
  prompt_at=$(($(date +%s) - INSTALL_EPOCH))
  check "install.sh asks for the amplifier driver" 0
  echo monoprice >&3
  if wait_for_text "$RUN/install.log" 'Serial port (number or path)' 60; then
    grep -qF "1) $BY_ID" "$RUN/install.log"
    check "install.sh offers the adapter from /dev/serial/by-id" $? "$BY_ID"
    echo 1 >&3
    answered=1
  else
    check "install.sh asks for the serial port" 1 "no port question within 60 s"
  fi
else
  check "install.sh asks for the amplifier driver" 1 "no question within $PROMPT_TIMEOUT s (see $RUN/install.log)"
fi
[ "$answered" = 1 ] || exec 3>&- # no terminal input left: install.sh reads end of input and goes on or stops
install_code=0
wait "$INSTALL_PID" || install_code=$?
INSTALL_PID=
install_took=$(($(date +%s) - INSTALL_EPOCH))
exec 3>&-
# The stamper's tail ends on its own within a second of install.sh (--pid).
timeout 10 tail --pid="$STAMPER_PID" -f /dev/null || kill "$STAMPER_PID"
tail -n 15 "$RUN/install.log" | sed 's/^/  | /'
check "install.sh finishes" "$install_code" "exit $install_code after $install_took s (log: $RUN/install.log)"

apt_from="$(stamp_of 'install.sh: installing from apt' || true)"
[ -n "$apt_from" ] && [ -n "${prompt_at:-}" ] && phase "apt: nodejs, npm, build-essential..." "$((prompt_at - apt_from))"
ci_from="$(stamp_of 'install.sh: amplifier: driver' || true)"
ci_to="$(stamp_of 'added [0-9]+ packages' || true)"
[ -n "$ci_from" ] && [ -n "$ci_to" ] && phase "npm ci (source tree, dev deps)" "$((ci_to - ci_from))"
prod_to="$(grep -E '^[0-9]+\|.*added [0-9]+ packages' "$RUN/install.stamped" | sed -n 2p | cut -d'|' -f1)"
[ -n "$ci_to" ] && [ -n "$prod_to" ] && phase "build + npm ci --omit=dev (staged)" "$((prod_to - INSTALL_EPOCH - ci_to))"
phase "install.sh in total" "$install_took"
grep -qE '(Setting up|Unpacking) nodejs' "$RUN/install.log"
check "install.sh installed nodejs from apt" $?
in_ct 20 sh -c 'dpkg -s nodejs npm build-essential libnode-dev >/dev/null'
check "nodejs, npm, build-essential and libnode-dev are installed" $?
in_ct 20 sh -c 'dpkg -s shairport-sync avahi-daemon gmediarender gstreamer1.0-plugins-base gstreamer1.0-plugins-good squeezelite >/dev/null'
check "the casting receivers and what they need are installed (shairport-sync, avahi-daemon, gmediarender, GStreamer's plugins, squeezelite)" $?
receivers="$(in_ct 20 systemctl is-enabled shairport-sync.service squeezelite.service gmediarender.service 2>/dev/null | tr '\n' ' ')"
[ "$receivers" = "masked masked masked " ]
check "the receivers' own system-wide services are masked" $? "$receivers"
receivers_active="$(in_ct 20 systemctl is-active shairport-sync.service squeezelite.service gmediarender.service 2>/dev/null | tr '\n' ' ')"
! echo "$receivers_active" | grep -qw active
check "none of the receivers' own services runs" $? "$receivers_active"
in_ct 20 systemctl is-active --quiet avahi-daemon.service
check "the Avahi daemon runs (AirPlay advertises through it)" $?

# --- The service under systemd --------------------------------------------------------------------------------
if [ "$install_code" = 0 ]; then
  # First start: from the main process's exec to READY=1 (systemd's own monotonic timestamps).
  started_us="$(unit_prop ExecMainStartTimestampMonotonic)"
  ready_us="$(unit_prop ActiveEnterTimestampMonotonic)"
  [ "${ready_us:-0}" -gt 0 ] && [ "${started_us:-0}" -gt 0 ] \
    && phase "first start (exec to READY=1)" "$(awk "BEGIN { printf \"%.1f\", ($ready_us - $started_us) / 1e6 }")"
  type="$(unit_prop Type)"; active="$(unit_prop ActiveState)"; sub="$(unit_prop SubState)"; enabled="$(unit_prop UnitFileState)"
  [ "$type" = notify ] && [ "$active" = active ] && [ "$sub" = running ] && [ "$enabled" = enabled ]
  check "azcd.service is Type=notify, active (running) and enabled" $? "Type=$type $active ($sub), $enabled"
  watchdog="$(unit_prop WatchdogUSec)"
  [ "$watchdog" = 30s ] || [ "$watchdog" = 30000000 ]
  check "the watchdog is armed" $? "WatchdogUSec=$watchdog"

  config="$(cat "$ROOT/etc/azcd/config.json" 2>/dev/null || true)"
  node -e 'const c = JSON.parse(process.argv[1]); process.exit(c.driver === "monoprice" && c.serialPort === process.argv[2] ? 0 : 1)' \
    "${config:-null}" "$BY_ID" 2>/dev/null
  check "/etc/azcd/config.json holds the answers" $? "$(echo "$config" | tr -d '\n ')"

  creds="$(grep -oE 'first admin credentials: [^ ]+' "$RUN/install.log" | tail -n1 | cut -d' ' -f4 | tr -d '\r' || true)"
  [ -n "$creds" ] && [ -f "$ROOT$creds" ]
  check "the first admin's credentials are where install.sh said" $? "${creds:-install.sh named no file}"
  if [ -n "$creds" ] && [ -f "$ROOT$creds" ]; then
    owner="$(chroot "$ROOT" stat -c '%U %a' "$creds")"
    [ "$owner" = "azcd 600" ]
    check "the credentials file is azcd's alone" $? "$owner"
  fi

  smoke() { node "$REPO/scripts/install-smoke.mjs" --base "http://127.0.0.1:$PORT" --driver monoprice \
    --zones "$((EMULATOR_UNITS * ZONES_PER_UNIT))" --wait-s 60 ${creds:+--credentials "$ROOT$creds"}; }
  out="$(smoke || true)"
  echo "$out"
  [[ "$out" == "install-smoke: PASS"* ]]
  check "/api/health: monoprice online; /api/zones lists the emulator's zones with the first admin's key" $?
  grep -qE '^emulator: "\?1' "$RUN/emulator.log"
  check "the emulator answered the service's status queries on its line" $? "$(grep -cE '^emulator: "' "$RUN/emulator.log") commands"

  groups="$(in_ct 10 id -nG azcd || true)"
  [[ " $groups " == *" dialout "* ]]
  check "the service user azcd is in dialout" $? "groups: $groups"
  pid="$(unit_prop MainPID)"
  dialout_gid="$(chroot "$ROOT" getent group dialout | cut -d: -f3)"
  in_ct 10 grep -qE "^Groups:.*\\b$dialout_gid\\b" "/proc/$pid/status"
  check "the running daemon holds the dialout group" $? "pid $pid"
  # Through the unit's DevicePolicy=closed (systemd always admits pseudo-terminals, the emulated adapter's class).
  in_ct 10 sh -c "ls -l /proc/$pid/fd" | grep -qF -- "-> $BY_ID"
  check "the daemon holds the adapter open inside its sandbox" $? "$BY_ID"

  # Restart: systemctl returns once the new process sent READY=1 (Type=notify).
  start=$SECONDS
  in_ct "$SERVICE_TIMEOUT" systemctl restart azcd.service
  code=$?
  phase "systemctl restart (to READY=1)" "$((SECONDS - start))"
  new_pid="$(unit_prop MainPID)"; active="$(unit_prop ActiveState)"
  [ "$code" = 0 ] && [ "$active" = active ] && [ "$new_pid" != "$pid" ] && [ "$new_pid" != 0 ]
  check "systemctl restart azcd comes back active" $? "exit $code, $active, pid $pid -> $new_pid"
  out="$(smoke || true)"
  echo "$out"
  [[ "$out" == "install-smoke: PASS"* ]]
  check "after the restart the driver is online and the zones listed again" $?

  start=$SECONDS
  in_ct "$SERVICE_TIMEOUT" systemctl stop azcd.service
  code=$?
  phase "systemctl stop" "$((SECONDS - start))"
  active="$(unit_prop ActiveState)"; result="$(unit_prop Result)"
  main_code="$(unit_prop ExecMainCode)"; main_status="$(unit_prop ExecMainStatus)"
  # ExecMainCode 1 is CLD_EXITED: the daemon exited by itself on SIGTERM (not killed), with status 0.
  [ "$code" = 0 ] && [ "$active" = inactive ] && [ "$result" = success ] && [ "$main_code" = 1 ] && [ "$main_status" = 0 ]
  check "systemctl stop is clean" $? "exit $code, $active, Result=$result, main process exited with status $main_status"
fi
in_ct 20 journalctl -u azcd.service --no-pager -o short-monotonic >"$RUN/azcd.journal.log" 2>&1 || true
if grep -qiE 'timed out|watchdog timeout|core-dump|Killing process' "$RUN/azcd.journal.log"; then
  check "the journal shows no timeout, watchdog kill or crash" 1 "see $RUN/azcd.journal.log"
else
  check "the journal shows no timeout, watchdog kill or crash" 0
fi
