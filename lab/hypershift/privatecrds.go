package hypershift

import (
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
)

// PrivateConversionPath is where the lab's webhook host serves the
// private CRDs' conversion: the conversion shim in front of Cluster API's
// own conversion webhook.
const PrivateConversionPath = "/convert-hypershift-private"

// PrivateClusterAPI is Cluster API core's CRDs in HyperShift's private
// groups (cluster.hypershift.openshift.io and its subdomains), as the
// "private CAPI types" enhancement installs them beside the platform's
// cluster.x-k8s.io: the same schemas, versions, stored version and
// contract labels, converted by the operator's shim at
// PrivateConversionPath. A hub without that webhook sets OnlyVersion.
func PrivateClusterAPI() crds.Set {
	s := crds.ClusterAPI()
	s.Name = "Cluster API core (HyperShift's private types)"
	s.RenameGroup = apiproxy.PrivateGroupOf
	s.ConversionPath = PrivateConversionPath
	return s
}
