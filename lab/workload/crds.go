package workload

import (
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/crds"
)

// ConfigAPI is the part of OpenShift's config.openshift.io API a workload
// cluster carries (ClusterVersion, ClusterOperator, Infrastructure, and
// the image configuration and mirror sets an install may bring),
// read from the openshift/api module as the Default feature set ships it.
func ConfigAPI() crds.Set {
	const dir = "config/v1/zz_generated.crd-manifests/"
	return crds.Set{
		Name:   "OpenShift config API",
		Module: "github.com/openshift/api",
		Files: []string{
			dir + "0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
			dir + "0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
			dir + "0000_10_config-operator_01_infrastructures-Default.crd.yaml",
			dir + "0000_10_config-operator_01_images-Default.crd.yaml",
			dir + "0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml",
			dir + "0000_10_config-operator_01_imagetagmirrorsets.crd.yaml",
		},
	}
}

// crdSets are the APIs of a workload cluster: OpenShift runs the machine
// API, its bare-metal remediation and the bare-metal operator inside the
// cluster it manages.
func crdSets() []crds.Set {
	return []crds.Set{ConfigAPI(), crds.MachineAPI(), crds.MachineAPIRemediation(binaries.CAPM3Version), crds.Metal3()}
}
