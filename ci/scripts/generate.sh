#!/usr/bin/env bash
# Regenerates everything `make verify` checks: deepcopy code of our API types,
# the CRD manifests the hub installs for modules that ship none, and the
# providers' CRDs, RBAC, webhook configurations and clusterctl components.
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
# Hive has many kinds; the assisted flow uses two.
"$cg" crd paths=github.com/openshift/hive/apis/hive/v1 output:crd:dir="$tmp/hive"
cp "$tmp"/hive/hive.openshift.io_{clusterdeployments,clusterimagesets}.yaml "$out"/

# The assisted-service API the providers drive; providers/config embeds it
# and lab/crds reads it from there.
rm -f providers/config/assisted/*.yaml
"$cg" crd paths=./providers/thirdparty/... output:crd:dir=providers/config/assisted

# Each provider: CRDs (with the Cluster API contract label from markers),
# RBAC of its controllers, its webhook configurations, then the clusterctl
# components.yaml assembled from those and the hand-written manager
# manifests.
for p in bootstrap controlplane agent; do
	dir=providers/$p/config
	rm -f "$dir"/crd/*.yaml "$dir"/rbac/role.yaml "$dir"/webhook/manifests.yaml
	"$cg" crd rbac:roleName=manager-role webhook paths="./providers/$p/..." \
		output:crd:dir="$dir/crd" output:rbac:dir="$dir/rbac" output:webhook:dir="$dir/webhook"
done
go run ./ci/components -provider bootstrap-openshift-assisted -prefix capoa-bootstrap- \
	-namespace capoa-bootstrap-system -out providers/bootstrap providers/bootstrap/config
go run ./ci/components -provider control-plane-openshift-assisted -prefix capoa-controlplane- \
	-namespace capoa-controlplane-system -out providers/controlplane providers/controlplane/config
# The agent provider implements the v1beta1 contract, as upstream does.
go run ./ci/components -provider infrastructure-agent -prefix capi-agent- -contract v1beta1 \
	-namespace capi-agent-system -out providers/agent providers/agent/config
