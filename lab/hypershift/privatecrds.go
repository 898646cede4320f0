package hypershift

import (
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
)

// PrivateClusterAPI is Cluster API core's CRDs in HyperShift's private
// groups (cluster.hypershift.openshift.io and its subdomains), as the
// "private CAPI types" enhancement installs them beside the platform's
// cluster.x-k8s.io: the same schemas, versions and contract labels. Until
// the conversion shim exists (docs/plans/hypershift.md, X4) they serve
// only v1beta2, the stored version, so no conversion is ever asked for.
func PrivateClusterAPI() crds.Set {
	s := crds.ClusterAPI()
	s.Name = "Cluster API core (HyperShift's private types)"
	s.RenameGroup = apiproxy.PrivateGroupOf
	s.OnlyVersion = "v1beta2"
	return s
}
