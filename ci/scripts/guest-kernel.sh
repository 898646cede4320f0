#!/usr/bin/env bash
# Fetches the kernel the lab's guests boot: Debian's generic kernel package
# (the cloud kernel boots faster but has no AHCI driver, and guests read
# config drives from the SATA CD-ROM),
# downloaded (not installed on the host) and unpacked into a version-keyed
# cache, ${PARITYLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab}/guest-kernel/<version>/.
# A version already unpacked is not fetched again; <cache>/current points at
# the version the lab boots.
set -euo pipefail

cache=${PARITYLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab}/guest-kernel
meta=linux-image-amd64
# The metapackage depends on exactly one versioned image package.
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
if [[ -z $pkg ]]; then
	echo "cannot resolve $meta from the apt lists; run 'apt-get update' (make apt-deps does) and retry" >&2
	exit 1
fi
version=${pkg#linux-image-}
dest=$cache/$version
# current names the version the lab boots.
point_current() { ln -sfn "$version" "$cache/current"; }
if [[ -f $dest/vmlinuz && -f $dest/modules/modules.dep ]]; then
	point_current
	echo "  ok  guest kernel $version (cached in $cache)"
	exit 0
fi

echo "==> fetching guest kernel $pkg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt's sandbox user cannot write a root-owned temp dir; download as root.
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null)
dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/root"
# The package ships no modules.dep: the host's depmod makes it on install.
depmod -b "$tmp/root" "$version"
mkdir -p "$tmp/out"
cp "$tmp/root/boot/vmlinuz-$version" "$tmp/out/vmlinuz"
cp -a "$tmp/root/lib/modules/$version" "$tmp/out/modules"
mkdir -p "$cache"
rm -rf "$dest.partial" "$dest"
mv "$tmp/out" "$dest.partial"
mv "$dest.partial" "$dest"
point_current
echo "  ok  guest kernel $version unpacked into $dest"
