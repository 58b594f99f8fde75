#!/usr/bin/env bash
# install.sh: builds azcd from this source tree and installs it into /opt/azcd (or --prefix) as a systemd service.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: sudo systemd/install.sh [--driver NAME [--serial-port PORT]] [--stream-player INPUT=DEVICE ...]
                               [--no-stream-players] [--prefix DIR] [--no-enable] [--no-system] [--dry-run]

  --driver NAME       amplifier driver written to /etc/azcd/config.json (simulated, monoprice, ...)
  --serial-port PORT  the amplifier's serial port, best a /dev/serial/by-id/... path (real drivers need one)
  --stream-player INPUT=DEVICE
                      the ALSA device DEVICE (as aplay -L names it, e.g. hw:CARD=sndrpihifiberry,DEV=0) is wired
                      into amplifier input INPUT: azcd plays a stream player there; repeat for more outputs.
                      AZC_STREAM_PLAYERS="5=hw:CARD=A,DEV=0 6=hw:CARD=B,DEV=0" does the same from the environment
  --no-stream-players do not ask which audio output feeds which amplifier input
  --prefix DIR        install the application into DIR (default /opt/azcd); the unit's paths are rewritten to match
  --no-enable         install everything but do not enable or (re)start azcd.service
  --no-system         install the application tree only: no user, unit, modules-load.d entry, config or systemctl
  --no-apt            never run apt-get; only say which packages are missing
  --dry-run           print every step without changing anything
  -h, --help          this text

Amplifier: without --driver, on a terminal and with no /etc/azcd/config.json yet, it asks for the driver and the
serial port (suggesting the adapters in /dev/serial/by-id/); otherwise it keeps the existing config, or on a first
install the simulated amplifier, and says so. --driver on an existing config changes only driver and serialPort.

Stream players: it lists the ALSA playback devices (aplay -l) and, on a terminal at the first install, asks which
amplifier input each one feeds. The answers (or --stream-player) become stream players created through the API once
the service runs (POST /api/players with the first administrator's API key from /var/lib/azcd/initial-admin.txt, or
AZC_API_KEY when that file is gone); a player already on that input gets the output instead.

Steps: from apt, whatever of nodejs, npm, build-essential, python3, libnode-dev (Node's headers, so node-gyp
needs no download), mpd (plays the stream players), alsa-utils (aplay, to list the outputs) and the casting receivers
(shairport-sync with avahi-daemon, gmediarender with gstreamer1.0-plugins-base and -good, squeezelite) is missing, as on a fresh Raspberry Pi OS image; npm ci (only if the source tree lacks its dev dependencies) and npm run build in the source tree; copy
package.json, package-lock.json, dist/, native/, scripts/ and daemon/ui/ into a staging directory and run
npm ci --omit=dev there (which also builds the sd_notify addon); swap it into place; install the sysusers entry
(user azcd in dialout and audio), /etc/modules-load.d/azcd.conf (usbserial, cdc_acm), /etc/azcd/config.json if
missing and the unit; disable and mask Debian's system-wide mpd.service and mpd.socket, and the receivers' own
shairport-sync, squeezelite and gmediarender services; then systemctl
daemon-reload, enable and restart, and create the stream players.
EOF
}

PREFIX=/opt/azcd
DRY_RUN=0
ENABLE=1
SYSTEM=1
APT=1
DRIVER=
SERIAL_PORT=
STREAM_PLAYERS=()
ASK_STREAM_PLAYERS=1
for mapping in ${AZC_STREAM_PLAYERS:-}; do STREAM_PLAYERS+=("$mapping"); done
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
    --driver) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; DRIVER="$2"; shift 2 ;;
    --driver=*) DRIVER="${1#--driver=}"; shift ;;
    --serial-port) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; SERIAL_PORT="$2"; shift 2 ;;
    --serial-port=*) SERIAL_PORT="${1#--serial-port=}"; shift ;;
    --stream-player) [[ $# -ge 2 ]] || { usage >&2; exit 2; }; STREAM_PLAYERS+=("$2"); shift 2 ;;
    --stream-player=*) STREAM_PLAYERS+=("${1#--stream-player=}"); shift ;;
    --no-stream-players) ASK_STREAM_PLAYERS=0; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    --no-enable) ENABLE=0; shift ;;
    --no-system) SYSTEM=0; shift ;;
    --no-apt) APT=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

SRC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UNIT_DIR=/etc/systemd/system
SYSUSERS_DIR=/etc/sysusers.d
MODULES_DIR=/etc/modules-load.d
CONFIG_DIR=/etc/azcd
CONFIG_FILE="$CONFIG_DIR/config.json"
# Stable names of USB serial adapters (a /dev/ttyUSB0 number can change between boots).
SERIAL_BY_ID=/dev/serial/by-id
ADDON=native/build/Release/azc_notify.node
umask 022

log() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

# Runs a command, or only shows it under --dry-run.
run() {
  if [[ $DRY_RUN -eq 1 ]]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

# Writes stdin to a file with a mode, or shows the content under --dry-run.
write_file() {
  local dest="$1" mode="$2" content
  content="$(cat)"
  if [[ $DRY_RUN -eq 1 ]]; then
    printf '+ write %s (mode %s):\n' "$dest" "$mode"
    printf '%s\n' "$content" | sed 's/^/|   /'
  else
    printf '%s\n' "$content" >"$dest.tmp.$$"
    chmod "$mode" "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
  fi
}

# The source tree usually belongs to whoever cloned it: build there as that user, not as root.
as_source_owner() {
  local owner
  owner="$(stat -c %U "$SRC_DIR")"
  if [[ $EUID -eq 0 && "$owner" != root ]] && command -v runuser >/dev/null; then
    run runuser -u "$owner" -- "$@"
  else
    run "$@"
  fi
}

# --- Checks -------------------------------------------------------------------------------------------------
[[ "$PREFIX" =~ ^/[A-Za-z0-9._/+-]+$ ]] || die "--prefix must be an absolute path of [A-Za-z0-9._/+-], got '$PREFIX'"
PREFIX="${PREFIX%/}"
[[ -n "$PREFIX" && "$PREFIX" != /usr && "$PREFIX" != /opt ]] || die "refusing --prefix '$PREFIX'"
STAGE="$PREFIX.staging"

# --- Prerequisites from apt: a fresh Raspberry Pi OS / Debian image has no Node.js and no compiler ---------------
# Debian's nodejs (trixie: 20.19) and npm; build-essential and python3 compile better-sqlite3 where no prebuilt binary
# can be fetched, and the sd_notify addon always; libnode-dev holds the headers of Debian's Node.
MISSING=()
command -v node >/dev/null || MISSING+=(nodejs)
command -v npm >/dev/null || MISSING+=(npm)
command -v python3 >/dev/null || MISSING+=(python3)
{ command -v make >/dev/null && command -v cc >/dev/null && command -v c++ >/dev/null; } || MISSING+=(build-essential)
# azcd starts one mpd per stream player; aplay lists the outputs it can play into.
command -v mpd >/dev/null || MISSING+=(mpd)
command -v aplay >/dev/null || MISSING+=(alsa-utils)
# The casting receivers a stream player can run (docs/playback.md): AirPlay through shairport-sync, which advertises
# through the Avahi daemon; UPnP/DLNA through gmediarender, whose player (playbin) and HTTP source are GStreamer
# plugins Debian only recommends; Squeezelite. Without recommends: no desktop sound server comes along.
command -v shairport-sync >/dev/null || MISSING+=(shairport-sync)
[[ -x /usr/sbin/avahi-daemon ]] || MISSING+=(avahi-daemon)
command -v gmediarender >/dev/null || MISSING+=(gmediarender)
[[ -n "$(find /usr/lib -name 'libgstplayback.so' -print -quit 2>/dev/null)" ]] || MISSING+=(gstreamer1.0-plugins-base)
[[ -n "$(find /usr/lib -name 'libgstsoup.so' -print -quit 2>/dev/null)" ]] || MISSING+=(gstreamer1.0-plugins-good)
command -v squeezelite >/dev/null || MISSING+=(squeezelite)
if [[ ! -f /usr/include/node/node.h ]] && { ! command -v node >/dev/null || dpkg -S "$(readlink -f "$(command -v node)")" 2>/dev/null | grep -q '^nodejs:'; }; then
  MISSING+=(libnode-dev)
fi
# A Node.js apt would install must be one azcd runs on: bookworm's is 18, and installing it only to refuse it after
# leaves the owner with a Node to remove. Asked before anything is installed.
apt_node_refused() {
  local candidate major
  candidate="$(apt-cache policy nodejs 2>/dev/null | awk '/Candidate:/ {print $2; exit}')"
  [[ -n "$candidate" && "$candidate" != "(none)" ]] || { echo "none"; return 0; }
  major="${candidate#*:}"
  major="${major%%.*}"
  [[ "$major" == 20 || "$major" == 22 || "$major" == 24 ]] && return 1
  echo "$candidate"
}
if [[ ${#MISSING[@]} -gt 0 ]]; then
  if [[ $APT -eq 1 && $SYSTEM -eq 1 && ( $EUID -eq 0 || $DRY_RUN -eq 1 ) ]] && command -v apt-get >/dev/null; then
    if [[ " ${MISSING[*]} " == *" nodejs "* ]] && refused="$(apt_node_refused)"; then
      die "azcd runs on Node.js 20, 22 or 24, and apt here offers nodejs $refused (Raspberry Pi OS / Debian 12 bookworm has 18): nothing was installed. Install Node.js 20 system-wide first (from your distribution's backports or the Node.js project's Debian packages, so that /usr/bin/node is 20), then rerun"
    fi
    log "installing from apt: ${MISSING[*]}"
    run apt-get update -q
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${MISSING[@]}"
  else
    log "warning: missing packages: ${MISSING[*]} (apt-get install ${MISSING[*]})"
  fi
fi
# Node's headers from the package, not from the internet: node-gyp reads this for better-sqlite3 and the addon.
if [[ -f /usr/include/node/node.h ]]; then export npm_config_nodedir=/usr; fi

command -v node >/dev/null || die "node not found: apt-get install nodejs npm (Node.js 20, 22 or 24)"
command -v npm >/dev/null || die "npm not found: apt-get install npm"
NODE="$(command -v node)"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
[[ "$NODE_MAJOR" == 20 || "$NODE_MAJOR" == 22 || "$NODE_MAJOR" == 24 ]] ||
  die "azcd runs on Node.js 20, 22 or 24 (the uWebSockets.js builds it has), found $(node --version)"
if [[ "$NODE_MAJOR" != 20 ]]; then
  # The uWebSockets.js build for Node 22/24 links against glibc 2.38 (Debian 13 "trixie" and later).
  GLIBC="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
  if [[ -z "$GLIBC" ]] || ! printf '2.38\n%s\n' "$GLIBC" | sort -V -C; then
    die "Node.js $NODE_MAJOR needs glibc 2.38 or newer here (Debian 13 trixie), found ${GLIBC:-none}: use Node.js 20, or upgrade the OS"
  fi
fi
case "$NODE" in
  /home/* | /root/*) die "node is at $NODE, which ProtectHome= hides from the service: install a system-wide Node.js" ;;
esac
for tool in python3 make cc; do
  command -v "$tool" >/dev/null || log "warning: $tool not found; native modules (better-sqlite3, the sd_notify addon) need python3, make and a C/C++ compiler (apt-get install build-essential python3)"
done
if [[ $DRY_RUN -eq 0 && $EUID -ne 0 && $SYSTEM -eq 1 ]]; then
  die "run as root (sudo), or use --dry-run, or --no-system with a --prefix you can write"
fi

# --- Amplifier: which driver and port the service starts with --------------------------------------------------
# The driver names the daemon knows, read from the registry's list of families (the build has not run yet).
KNOWN_DRIVERS="$(sed -n "s/^export const DRIVER_FAMILIES = \[\(.*\)\] as const;.*/\1/p" "$SRC_DIR/drivers/index.ts" | tr -d ' ' | tr ',' ' ')"
[[ -n "$KNOWN_DRIVERS" ]] || KNOWN_DRIVERS=simulated

serial_suggestions() {
  local entry
  [[ -d "$SERIAL_BY_ID" ]] || return 0
  for entry in "$SERIAL_BY_ID"/*; do
    [[ -e "$entry" ]] && printf '%s\n' "$entry"
  done
  return 0
}

print_suggestions() {
  local found
  found="$(serial_suggestions)"
  if [[ -n "$found" ]]; then
    log "serial adapters found in $SERIAL_BY_ID/:"
    printf '%s\n' "$found" | sed 's/^/    /'
  else
    log "no serial adapter found in $SERIAL_BY_ID/ (plug in the USB-RS-232 adapter first)"
  fi
}

check_amplifier() {
  [[ " $KNOWN_DRIVERS " == *" $DRIVER "* ]] || die "unknown --driver '$DRIVER': choose one of $KNOWN_DRIVERS"
  if [[ "$DRIVER" == simulated ]]; then
    [[ -z "$SERIAL_PORT" ]] || die "--serial-port is for a real amplifier; the simulated driver has none"
    return 0
  fi
  if [[ -z "$SERIAL_PORT" ]]; then
    print_suggestions >&2
    die "--driver $DRIVER needs --serial-port PORT (best a $SERIAL_BY_ID/... path)"
  fi
  [[ "$SERIAL_PORT" != *[[:cntrl:]]* ]] || die "--serial-port must not contain control characters"
  if [[ "$SERIAL_PORT" == /* && ! -e "$SERIAL_PORT" ]]; then
    log "warning: $SERIAL_PORT does not exist now; the service reports the amplifier offline until it appears"
  fi
  return 0
}

# Asks on the terminal; adapters are numbered so a long by-id name need not be typed.
ask_amplifier() {
  local answer entry i suggestions=()
  printf 'Amplifier driver (%s) [simulated]: ' "${KNOWN_DRIVERS// /, }"
  read -r answer || answer=
  DRIVER="${answer:-simulated}"
  [[ "$DRIVER" == simulated ]] && return 0
  while IFS= read -r entry; do suggestions+=("$entry"); done < <(serial_suggestions)
  if [[ ${#suggestions[@]} -gt 0 ]]; then
    printf 'Serial adapters in %s/:\n' "$SERIAL_BY_ID"
    for i in "${!suggestions[@]}"; do printf '  %d) %s\n' "$((i + 1))" "${suggestions[$i]}"; done
    printf 'Serial port (number or path) [1]: '
  else
    printf 'No adapter in %s/ now. Serial port (path): ' "$SERIAL_BY_ID"
  fi
  read -r answer || answer=
  [[ -z "$answer" && ${#suggestions[@]} -gt 0 ]] && answer=1
  if [[ "$answer" =~ ^[0-9]+$ ]] && ((answer >= 1 && answer <= ${#suggestions[@]})); then
    answer="${suggestions[$((answer - 1))]}"
  fi
  SERIAL_PORT="$answer"
}

if [[ -n "$DRIVER" || -n "$SERIAL_PORT" ]]; then
  [[ $SYSTEM -eq 1 ]] || die "--driver and --serial-port go to $CONFIG_FILE, which --no-system leaves alone"
  [[ -n "$DRIVER" ]] || die "--serial-port needs --driver (for example --driver monoprice)"
  check_amplifier
elif [[ $SYSTEM -eq 1 && ! -e "$CONFIG_FILE" ]]; then
  if [[ -t 0 ]]; then
    ask_amplifier
    check_amplifier
  else
    log "no --driver given and no terminal to ask on: the service starts with the simulated amplifier"
    log "  for a real one rerun with --driver monoprice --serial-port $SERIAL_BY_ID/..., or edit $CONFIG_FILE"
    print_suggestions
  fi
fi

# The new config is made now, so a broken existing file stops the install before anything changed. Only driver
# and serialPort change; every other setting already in the file stays.
CONFIG_JSON=
if [[ -n "$DRIVER" ]]; then
  CONFIG_JSON="$(DRIVER="$DRIVER" SERIAL_PORT="$SERIAL_PORT" node -e '
    const fs = require("fs");
    const file = process.argv[1];
    let config = {};
    try {
      config = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (err) {
      if (err.code !== "ENOENT") { console.error(`${file} is not valid JSON: ${err.message}`); process.exit(1); }
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) { console.error(`${file} is not a JSON object`); process.exit(1); }
    config.driver = process.env.DRIVER;
    if (process.env.SERIAL_PORT) config.serialPort = process.env.SERIAL_PORT;
    else delete config.serialPort;
    process.stdout.write(JSON.stringify(config, null, 2));
  ' "$CONFIG_FILE")" || die "could not update $CONFIG_FILE: fix or remove it, then rerun"
fi

# --- Stream players: which of the appliance's audio outputs feeds which amplifier input ------------------------
STREAM_PLAYERS_TOOL="$SRC_DIR/systemd/stream-players.mjs"

# The ALSA playback devices, "NAME<TAB>card: device" a line, named by the card's id (hw:CARD=id,DEV=n), which stays the
# same across boots where the card's number may not.
alsa_devices() {
  command -v aplay >/dev/null || return 0
  LC_ALL=C aplay -l 2>/dev/null |
    sed -n 's/^card [0-9]*: \([^ ]*\) \[\(.*\)\], device \([0-9]*\): .*\[\(.*\)\]$/hw:CARD=\1,DEV=\3\t\2: \4/p'
  return 0
}

print_alsa_devices() {
  local found
  if ! command -v aplay >/dev/null; then
    log "aplay not found (apt-get install alsa-utils): the audio outputs cannot be listed now"
    return 0
  fi
  found="$(alsa_devices)"
  if [[ -n "$found" ]]; then
    log "ALSA playback devices (aplay -l):"
    printf '%s\n' "$found" | awk -F'\t' '{ printf "    %-36s %s\n", $1, $2 }'
  else
    log "no ALSA playback device found (aplay -l lists none): no stream player now; connect the DAC, then rerun with --stream-player INPUT=DEVICE"
  fi
}

# Asks, device by device, which amplifier input it is wired into; an empty answer leaves it unused.
ask_stream_players() {
  local answer line name devices=()
  while IFS= read -r line; do devices+=("$line"); done < <(alsa_devices)
  for line in "${devices[@]}"; do
    name="${line%%$'\t'*}"
    for (( ; ; )); do
      printf 'Amplifier input fed by %s (%s) [none]: ' "$name" "${line#*$'\t'}"
      read -r answer || answer=
      [[ -z "$answer" ]] || { [[ "$answer" =~ ^[0-9]{1,2}$ ]] && ((10#$answer >= 1)); } && break
      printf '  the number of an amplifier input (1-99), or nothing to leave this output unused\n'
    done
    if [[ -n "$answer" ]]; then STREAM_PLAYERS+=("$((10#$answer))=$name"); fi
  done
  return 0
}

if [[ ${#STREAM_PLAYERS[@]} -gt 0 ]]; then
  [[ $SYSTEM -eq 1 ]] || die "--stream-player creates players in the installed service, which --no-system leaves alone"
  [[ $ASK_STREAM_PLAYERS -eq 1 ]] || die "--no-stream-players and --stream-player (or AZC_STREAM_PLAYERS) contradict each other"
elif [[ $SYSTEM -eq 1 && $ASK_STREAM_PLAYERS -eq 1 && ! -e "$CONFIG_FILE" ]]; then
  print_alsa_devices
  if [[ -t 0 ]]; then
    ask_stream_players
  elif [[ -n "$(alsa_devices)" ]]; then
    log "no terminal to ask on: no stream player; map an output with --stream-player INPUT=DEVICE (or AZC_STREAM_PLAYERS)"
  fi
fi
if [[ ${#STREAM_PLAYERS[@]} -gt 0 ]]; then
  node "$STREAM_PLAYERS_TOOL" --check "${STREAM_PLAYERS[@]}" || die "fix the stream player mapping (INPUT=DEVICE), then rerun"
fi

[[ $DRY_RUN -eq 1 ]] && log "dry run: nothing below is executed"
log "source $SRC_DIR -> $PREFIX (node $NODE $(node --version))"
if [[ -n "$DRIVER" ]]; then log "amplifier: driver $DRIVER${SERIAL_PORT:+ on $SERIAL_PORT}"; fi
for mapping in "${STREAM_PLAYERS[@]}"; do log "stream player: amplifier input ${mapping%%=*} <- ALSA device ${mapping#*=}"; done

# --- Build in the source tree -----------------------------------------------------------------------------------
if [[ ! -x "$SRC_DIR/node_modules/.bin/tsc" ]]; then
  as_source_owner npm ci --prefix "$SRC_DIR" --no-audit --no-fund
fi
as_source_owner npm run build --prefix "$SRC_DIR"
[[ $DRY_RUN -eq 1 || -f "$SRC_DIR/dist/daemon/main.js" ]] || die "the build produced no dist/daemon/main.js"

# --- Stage the application, install production dependencies, swap it in ------------------------------------
PARTS=(package.json package-lock.json dist native scripts)
[[ -d "$SRC_DIR/daemon/ui" ]] && PARTS+=(daemon/ui)
run rm -rf "$STAGE"
run mkdir -p "$STAGE"
if [[ $DRY_RUN -eq 1 ]]; then
  printf '+ tar -C %q --exclude=native/build -cf - %s | tar -C %q --no-same-owner -xf -\n' "$SRC_DIR" "${PARTS[*]}" "$STAGE"
else
  tar -C "$SRC_DIR" --exclude=native/build -cf - "${PARTS[@]}" | tar -C "$STAGE" --no-same-owner -xf -
fi
# The installed tree has no TypeScript: drop the lifecycle scripts that would run tsc during npm ci.
run npm pkg delete scripts.prepare scripts.prestart --prefix "$STAGE"
# Runs the package's install script too, which builds the sd_notify addon (scripts/build-native.mjs).
run npm ci --omit=dev --no-audit --no-fund --prefix "$STAGE"
if [[ $DRY_RUN -eq 0 && ! -f "$STAGE/$ADDON" ]]; then
  die "the sd_notify addon was not built ($STAGE/$ADDON); Type=notify needs it: apt-get install build-essential python3, then rerun"
fi
if [[ -d "$PREFIX" ]]; then
  run rm -rf "$PREFIX.old"
  run mv "$PREFIX" "$PREFIX.old"
fi
run mv "$STAGE" "$PREFIX"
run rm -rf "$PREFIX.old"

if [[ $SYSTEM -eq 0 ]]; then
  log "application installed in $PREFIX (--no-system: no user, unit or service changes)"
  exit 0
fi

# --- System integration -------------------------------------------------------------------------------------
run install -d -m 0755 "$SYSUSERS_DIR" "$MODULES_DIR" "$UNIT_DIR"
run install -m 0644 "$SRC_DIR/systemd/azcd.sysusers" "$SYSUSERS_DIR/azcd.conf"
run systemd-sysusers "$SYSUSERS_DIR/azcd.conf"

# DeviceAllow=char-ttyUSB/char-ttyACM resolve through /proc/devices when the service starts: load the USB serial
# drivers at boot so an adapter plugged in later is still allowed.
printf '# azcd: USB serial drivers, loaded at boot so DeviceAllow=char-ttyUSB/char-ttyACM resolve\nusbserial\ncdc_acm\n' |
  write_file "$MODULES_DIR/azcd.conf" 0644
# systemd-modules-load reads the file at boot without the modprobe tool; only loading them now needs kmod.
if [[ $DRY_RUN -eq 1 ]] || command -v modprobe >/dev/null; then
  run modprobe -a -q usbserial cdc_acm || log "warning: could not load usbserial/cdc_acm now; they load at next boot"
else
  log "warning: modprobe not found (apt-get install kmod): usbserial/cdc_acm load at next boot"
fi

run install -d -m 0755 "$CONFIG_DIR"
if [[ -n "$DRIVER" ]]; then
  printf '%s' "$CONFIG_JSON" | write_file "$CONFIG_FILE" 0644
elif [[ -e "$CONFIG_FILE" ]]; then
  log "keeping existing $CONFIG_FILE"
else
  printf '{}' | write_file "$CONFIG_FILE" 0644
fi

# Debian's mpd package enables a system-wide mpd (mpd.service, and mpd.socket that starts it on the first client): it
# would hold the sound card azcd's own mpds play into. Masked, nothing can start it, not even another unit.
if [[ $DRY_RUN -eq 1 || -e /lib/systemd/system/mpd.service || -e /usr/lib/systemd/system/mpd.service ]]; then
  run systemctl disable mpd.service mpd.socket || log "warning: could not disable mpd.service/mpd.socket; masking them next"
fi
run systemctl mask mpd.service mpd.socket
# The receivers' packages enable a system-wide receiver each, under the host's name and on the default sound card:
# azcd runs its own per stream player instead. Masked like mpd; the Avahi daemon stays (AirPlay advertises through it).
run systemctl disable shairport-sync.service squeezelite.service gmediarender.service ||
  log "warning: could not disable the receivers' own services; masking them next"
run systemctl mask shairport-sync.service squeezelite.service gmediarender.service

sed -e "s#/opt/azcd#$PREFIX#g" -e "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" "$SRC_DIR/systemd/azcd.service" |
  write_file "$UNIT_DIR/azcd.service" 0644

if [[ ! -d /run/systemd/system ]]; then
  if [[ $DRY_RUN -eq 0 ]]; then
    log "systemd is not running here: skipping systemctl; run 'systemctl daemon-reload && systemctl enable --now azcd' on the appliance"
    if [[ ${#STREAM_PLAYERS[@]} -gt 0 ]]; then log "stream players not made (the service is not running): start it, then rerun with the same --stream-player"; fi
    exit 0
  fi
  log "(systemd is not running on this machine; on the appliance the steps below follow)"
fi
run systemctl daemon-reload
# Masking does not stop what the package's installation already started.
run systemctl stop mpd.socket mpd.service || log "warning: could not stop mpd.service/mpd.socket; they stay masked and stop at the next boot"
run systemctl stop shairport-sync.service squeezelite.service gmediarender.service ||
  log "warning: could not stop the receivers' own services; they stay masked and stop at the next boot"
if [[ $ENABLE -eq 1 ]]; then
  run systemctl enable azcd.service
  run systemctl restart azcd.service
  # Type=notify: restart returns once azcd answers, so the players can be created now. A failure leaves the
  # service installed and running; the message says what to fix.
  if [[ ${#STREAM_PLAYERS[@]} -gt 0 ]]; then
    if [[ $DRY_RUN -eq 1 ]]; then
      node "$STREAM_PLAYERS_TOOL" --dry-run --config "$CONFIG_FILE" --service-env "$CONFIG_DIR/azcd.env" "${STREAM_PLAYERS[@]}"
    else
      node "$STREAM_PLAYERS_TOOL" --config "$CONFIG_FILE" --service-env "$CONFIG_DIR/azcd.env" --key-file /var/lib/azcd/initial-admin.txt "${STREAM_PLAYERS[@]}" ||
        log "warning: not every stream player was made; rerun with the same --stream-player, or set the output in the dashboard"
    fi
  fi
  log "azcd $([[ $DRY_RUN -eq 1 ]] && echo 'would now be' || echo is) running: journalctl -u azcd -f; first admin credentials: /var/lib/azcd/initial-admin.txt"
else
  log "installed but not enabled (--no-enable): systemctl enable --now azcd"
  if [[ ${#STREAM_PLAYERS[@]} -gt 0 ]]; then
    log "stream players not made (the service is not running): start it, then rerun with the same --stream-player"
  fi
fi
