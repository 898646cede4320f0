#!/usr/bin/env bash
# Prepares the host for a libvirt daemon the lab starts itself: Debian's
# libvirt-daemon runs QEMU as libvirt-qemu:libvirt-qemu (compiled-in default)
# and needs the kvm group and its runtime directories. The config packages
# (libvirt-daemon-system, -config-network) are deliberately not installed:
# they would start services and define a bridged default network.
# Idempotent; needs root.
set -euo pipefail

changed=()
getent group kvm >/dev/null || { groupadd --system kvm; changed+=("group kvm"); }
getent group libvirt-qemu >/dev/null || { groupadd --system libvirt-qemu; changed+=("group libvirt-qemu"); }
if ! id libvirt-qemu >/dev/null 2>&1; then
	useradd --system --gid libvirt-qemu --groups kvm --home-dir /var/lib/libvirt --no-create-home \
		--shell /usr/sbin/nologin libvirt-qemu
	changed+=("user libvirt-qemu")
fi
for dir in /var/run/libvirt /var/log/libvirt /var/lib/libvirt; do
	[[ -d $dir ]] || { mkdir -p "$dir"; changed+=("$dir"); }
done

# What Debian's udev rules do where udev runs: QEMU (as libvirt-qemu, in
# group kvm) may open /dev/kvm. Without it libvirt probes QEMU as root with
# KVM, finds KVM missing for its QEMU user, and re-probes on every lookup.
if [[ -c /dev/kvm && $(stat -c %G:%a /dev/kvm) != kvm:660 ]]; then
	chgrp kvm /dev/kvm
	chmod 0660 /dev/kvm
	changed+=("/dev/kvm group kvm, mode 0660")
fi

if ((${#changed[@]})); then
	echo "  ok  libvirt host prepared: ${changed[*]}"
else
	echo "  ok  libvirt host already prepared"
fi
