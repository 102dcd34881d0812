#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright cannot download its own browser on these machines) and a
# CJK font makes the Chinese screenshots legible. Installs both when missing and permitted (root, or sudo without a
# password); otherwise says what to run and fails: a missing browser is never a silent skip.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
fc-list 2>/dev/null | grep -qi wqy || need+=(fonts-wqy-zenhei)
[ ${#need[@]} -eq 0 ] && exit 0
echo "browser tests need: ${need[*]}; installing with apt-get" >&2
if [ "$(id -u)" -eq 0 ]; then as=(); elif sudo -n true 2>/dev/null; then as=(sudo -n); else
  echo "error: cannot install ${need[*]} (not root, no passwordless sudo): run 'sudo apt-get install -y ${need[*]}' and retry" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "error: no apt-get on this machine: install ${need[*]} (Chromium at /usr/bin/chromium) and retry" >&2
  exit 1
fi
"${as[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
[ -x /usr/bin/chromium ] || { echo "error: apt-get finished but /usr/bin/chromium is missing" >&2; exit 1; }
