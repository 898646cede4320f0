#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from Go modules
# (lab/binaries/modules), and the upstream CAPM3 controller manager (the
# main package of github.com/metal3-io/cluster-api-provider-metal3 at the
# version the repository's go.mod pins), into a version-keyed cache outside
# the clone:
#   ${PARITYLAB_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab/bin}/<program>-<version>
# A program already in the cache is not rebuilt, so a second run takes
# seconds. Nothing is downloaded except Go modules.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin_dir=${PARITYLAB_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab/bin}
mkdir -p "$bin_dir"

# required_version <go.mod> <module>: the version go.mod requires.
required_version() {
	awk -v m="$2" '{ for (i = 1; i < NF; i++) if ($i == m && $(i+1) ~ /^v/ && $(i+2) != "=>") { print $(i+1); exit } }' "$1"
}

# build <module dir> <program> <version> <ldflags> [<package>]
# <package> defaults to ./cmd/<program> of the module.
build() {
	local dir=$1 program=$2 version=$3 ldflags=$4 pkg=${5:-./cmd/$2}
	local out="$bin_dir/$program-$version"
	if [[ -x $out ]]; then
		echo "  ok  $program $version (cached in $bin_dir)"
		return
	fi
	echo "==> building $program $version from Go modules (first time only; several minutes on 2 cores)"
	local log tmp start=$SECONDS
	log=$(mktemp) tmp="$out.partial.$$"
	trap 'rm -f "$log" "$tmp"' RETURN
	(cd "$dir" && go build -v -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg") 2>"$log" &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 15
		kill -0 "$pid" 2>/dev/null && printf '    ... %s: %d packages compiled, %ds\n' "$program" "$(grep -vc '^go: ' "$log" || true)" $((SECONDS - start))
	done
	if ! wait "$pid"; then
		echo "!! building $program failed; last lines of the build log:" >&2
		tail -n 40 "$log" >&2
		return 1
	fi
	mv "$tmp" "$out"
	echo "  ok  $program $version built in $((SECONDS - start))s"
}

modules="$root/lab/binaries/modules"
kube_version=$(required_version "$modules/kube/go.mod" k8s.io/kubernetes)
etcd_version=$(required_version "$modules/etcd/go.mod" go.etcd.io/etcd/server/v3)
[[ -n $kube_version && -n $etcd_version ]] || { echo "cannot read versions from $modules/*/go.mod" >&2; exit 1; }
capm3_module=github.com/metal3-io/cluster-api-provider-metal3
capm3_version=$(required_version "$root/go.mod" "$capm3_module")
[[ -n $capm3_version ]] || { echo "cannot read the $capm3_module version from $root/go.mod" >&2; exit 1; }

minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

build "$modules/etcd" etcd "$etcd_version" "-s -w"
build "$modules/kube" kube-apiserver "$kube_version" "$kube_ldflags"
build "$modules/kube" kube-controller-manager "$kube_version" "$kube_ldflags"
build "$root" capm3 "$capm3_version" "-s -w" "$capm3_module"

# controller-runtime's envtest looks for plain names in $KUBEBUILDER_ASSETS:
# a version-keyed directory of links to the binaries above.
assets="$bin_dir/../kubebuilder-assets/$kube_version"
mkdir -p "$assets"
ln -sfn "../../bin/kube-apiserver-$kube_version" "$assets/kube-apiserver"
ln -sfn "../../bin/kube-controller-manager-$kube_version" "$assets/kube-controller-manager"
ln -sfn "../../bin/etcd-$etcd_version" "$assets/etcd"
echo "  ok  envtest assets in $(cd "$assets" && pwd)"
