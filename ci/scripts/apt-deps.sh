#!/usr/bin/env bash
# Installs the Debian packages listed in a file, skipping those present, so a
# second run does nothing. Usage: apt-deps.sh <package list file>
set -euo pipefail

list=${1:?usage: apt-deps.sh <package list file>}
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')

missing=()
for pkg in "${wanted[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
	echo "  ok  Debian packages (${#wanted[@]} present)"
	exit 0
fi

sudo=()
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "need root to install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "==> installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Package lists are refreshed at most once an hour.
if [[ -z $(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | head -n 1) ]]; then
	"${sudo[@]}" apt-get update -qq
fi
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "  ok  Debian packages installed"
