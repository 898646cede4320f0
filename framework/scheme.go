package framework

import (
	"errors"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1beta1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/bootstrap"
	"github.com/paritylab/paritylab/providers/controlplane"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Scheme knows every API a scenario reads or writes, on the hub and in
// workload clusters: Kubernetes, Cluster API core, the agent providers,
// metal3 (BareMetalHost, CAPM3), the machine API, hive and assisted,
// OpenShift's config API, and HyperShift's HostedCluster and NodePool
// with the agent infrastructure provider's kinds.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	err := errors.Join(
		clientgoscheme.AddToScheme(s),
		clusterv1.AddToScheme(s),
		bootstrap.AddToScheme(s),
		controlplane.AddToScheme(s),
		bmov1alpha1.AddToScheme(s),
		capm3v1beta1.AddToScheme(s),
		capm3v1beta2.AddToScheme(s),
		machinev1beta1.Install(s),
		hivev1.AddToScheme(s),
		hiveextv1beta1.AddToScheme(s),
		agentv1beta1.AddToScheme(s),
		configv1.Install(s),
		hypershiftv1beta1.AddToScheme(s),
		capiagentv1beta1.AddToScheme(s),
	)
	return s, err
}
