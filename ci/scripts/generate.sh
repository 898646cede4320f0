#!/usr/bin/env bash
# Regenerates everything `make verify` checks: deepcopy code of our API types
# and the CRD manifests the hub installs for modules that ship none.
# Usage: generate.sh <controller-gen>
set -euo pipefail

cg=${1:?usage: generate.sh <controller-gen binary>}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=lab/crds/generated
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Deepcopy of every API package of ours.
"$cg" object paths=./providers/...

rm -f "$out"/*.yaml
# metal3's BareMetalHost has a float field; BMO generates with the same flag.
"$cg" crd:allowDangerousTypes=true paths=github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1 output:crd:dir="$out"
"$cg" crd paths=github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1 output:crd:dir="$out"
# Hive has many kinds; the assisted flow uses two.
"$cg" crd paths=github.com/openshift/hive/apis/hive/v1 output:crd:dir="$tmp/hive"
cp "$tmp"/hive/hive.openshift.io_{clusterdeployments,clusterimagesets}.yaml "$out"/
"$cg" crd paths=./providers/thirdparty/... output:crd:dir="$out"
