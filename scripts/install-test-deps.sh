#!/usr/bin/env bash
# Installs the system tools the test suite uses (socat for serial ptys, Chromium for the dashboard tests,
# systemd-analyze for the unit checks, curl and jq for the README's tour, mosquitto as the MQTT bridge's broker, mpd for
# the stream players' engine and sox for the audio its tests generate, MP3 included; the casting receivers —
# squeezelite, shairport-sync with the Avahi daemon and a D-Bus bus it advertises through, aplay for ALSA players, gmediarender with the
# GStreamer plugins it plays with, which Debian only recommends). Needs root; does nothing when everything is already
# there.
set -euo pipefail
need=()
command -v socat >/dev/null 2>&1 || need+=(socat)
[ -x /usr/bin/chromium-headless-shell ] || need+=(chromium-headless-shell)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v jq >/dev/null 2>&1 || need+=(jq)
[ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
[ -x /usr/bin/mpd ] || need+=(mpd)
command -v sox >/dev/null 2>&1 || need+=(sox)
# sox writes MP3 only with this format library.
[ -n "$(find /usr/lib -name 'libsox_fmt_mp3.so' -print -quit 2>/dev/null)" ] || need+=(libsox-fmt-mp3)
command -v squeezelite >/dev/null 2>&1 || need+=(squeezelite)
# aplay: the daemon feeds an ALSA stream player's device through it while a receiver is on (ALSA's null device here).
command -v aplay >/dev/null 2>&1 || need+=(alsa-utils)
command -v shairport-sync >/dev/null 2>&1 || need+=(shairport-sync)
[ -x /usr/sbin/avahi-daemon ] || need+=(avahi-daemon)
command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus)
command -v gmediarender >/dev/null 2>&1 || need+=(gmediarender)
# playbin (gmediarender's player) is in -base, the HTTP source it fetches a sender's URL with in -good.
[ -n "$(find /usr/lib -name 'libgstplayback.so' -print -quit 2>/dev/null)" ] || need+=(gstreamer1.0-plugins-base)
[ -n "$(find /usr/lib -name 'libgstsoup.so' -print -quit 2>/dev/null)" ] || need+=(gstreamer1.0-plugins-good)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing test tools: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
  exit 1
fi
echo "installing test tools: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
