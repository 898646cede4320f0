package crds

import (
	"embed"

	providerconfig "github.com/paritylab/paritylab/providers/config"
)

// generated holds CRDs that `make generate` produces with controller-gen from
// Go types of modules that ship no manifests.
//
//go:embed generated/*.yaml
var generated embed.FS

// ContractLabelV1Beta1 and ContractLabelV1Beta2 are the labels by which
// Cluster API learns which API version of a provider's kind implements its
// v1beta1 and v1beta2 contracts.
const (
	ContractLabelV1Beta1 = "cluster.x-k8s.io/v1beta1"
	ContractLabelV1Beta2 = "cluster.x-k8s.io/v1beta2"
)

// ClusterAPI is the Cluster API core set, read from the module.
func ClusterAPI() Set {
	return Set{
		Name:         "Cluster API core",
		Module:       "sigs.k8s.io/cluster-api",
		Files:        []string{"config/crd/bases/*.yaml"},
		DropUnserved: true,
	}
}

// MachineAPI is the OpenShift machine API (Machine, MachineSet,
// MachineHealthCheck) as the Default feature set ships it.
func MachineAPI() Set {
	const dir = "machine/v1beta1/zz_generated.crd-manifests/"
	return Set{
		Name:   "OpenShift machine API",
		Module: "github.com/openshift/api",
		Files: []string{
			dir + "0000_10_machine-api_01_machines-Default.crd.yaml",
			dir + "0000_10_machine-api_01_machinesets-Default.crd.yaml",
			dir + "0000_10_machine-api_01_machinehealthchecks.crd.yaml",
		},
	}
}

// Metal3 is the bare-metal operator API (BareMetalHost and friends).
func Metal3() Set {
	return Set{Name: "metal3 bare-metal operator", FS: generated, Files: []string{"generated/metal3.io_*.yaml"}}
}

// CAPM3Module is the metal3 Cluster API infrastructure provider's module.
const CAPM3Module = "github.com/metal3-io/cluster-api-provider-metal3"

// CAPM3 is the metal3 Cluster API infrastructure provider's API as the
// module ships it at version (the lab runs that version's manager), with
// the contract labels its config/crd kustomization adds: v1beta1 serves
// the v1beta1 contract, v1beta2 (the storage version) the v1beta2 one.
func CAPM3(version string) Set {
	return Set{
		Name:          "metal3 Cluster API provider",
		Module:        CAPM3Module,
		ModuleVersion: version,
		Files:         []string{"config/crd/bases/*.yaml"},
		Labels:        map[string]string{ContractLabelV1Beta1: "v1beta1", ContractLabelV1Beta2: "v1beta2"},
	}
}

// MachineAPIRemediation is the metal3 remediation API (Metal3Remediation
// and its template) as OpenShift's bare-metal machine controller serves it
// in a cluster next to the machine API: CAPM3's v1beta1 version, stored,
// with no conversion webhook (cluster-api-provider-baremetal's own
// manifests declare v1beta1 the storage version). The CRDs are read from
// the CAPM3 module at version.
func MachineAPIRemediation(version string) Set {
	return Set{
		Name:          "metal3 remediation (machine API)",
		Module:        CAPM3Module,
		ModuleVersion: version,
		Files: []string{
			"config/crd/bases/infrastructure.cluster.x-k8s.io_metal3remediations.yaml",
			"config/crd/bases/infrastructure.cluster.x-k8s.io_metal3remediationtemplates.yaml",
		},
		OnlyVersion: "v1beta1",
	}
}

// Hive is the part of hive's API the assisted flow uses.
func Hive() Set {
	return Set{
		Name: "hive",
		FS:   generated,
		Files: []string{
			"generated/hive.openshift.io_clusterdeployments.yaml",
			"generated/hive.openshift.io_clusterimagesets.yaml",
		},
	}
}

// Assisted is the assisted-service API (InfraEnv, Agent, NMStateConfig,
// AgentClusterInstall), as the providers embed it: they own these types'
// Go mirror and generate the CRDs.
func Assisted() Set {
	m := providerconfig.Assisted()
	return Set{Name: "assisted service", FS: m.FS, Files: m.CRDs}
}

// HyperShiftModule is HyperShift's API module.
const HyperShiftModule = "github.com/openshift/hypershift/api"

// hyperShiftPieces is where the module keeps its CRDs: one directory per
// CRD of feature-gated pieces, which OpenShift's generator merges into the
// manifests HyperShift installs. The module ships no merged manifests.
const hyperShiftPieces = "hypershift/v1beta1/zz_generated.featuregated-crd-manifests/"

// HyperShift is the HyperShift operator's API for hosted clusters on the
// agent platform: HostedCluster and NodePool, read from the module, with
// the fields no feature gate guards (the agent platform's are among them)
// and NodePool's scale subresource from the module's manual override.
func HyperShift() Set {
	return Set{
		Name:   "HyperShift",
		Module: HyperShiftModule,
		Files: []string{
			hyperShiftPieces + "hostedclusters.hypershift.openshift.io/AAA_ungated.yaml",
			hyperShiftPieces + "nodepools.hypershift.openshift.io/AAA_ungated.yaml",
		},
		FeatureGated: true,
		Overrides:    []string{"hypershift/v1beta1/manual-override-crd-manifests/nodepools.hypershift.openshift.io/*.yaml"},
	}
}

// HostedControlPlane is the control-plane kind HyperShift's CAPI Cluster
// refers to. HyperShift labels its CRD as serving the v1beta1 contract
// (cmd/install/assets/crds/assets.go), which Cluster API reads to use it.
func HostedControlPlane() Set {
	return Set{
		Name:         "HyperShift hosted control plane",
		Module:       HyperShiftModule,
		Files:        []string{hyperShiftPieces + "hostedcontrolplanes.hypershift.openshift.io/AAA_ungated.yaml"},
		FeatureGated: true,
		Labels:       map[string]string{ContractLabelV1Beta1: "v1beta1"},
	}
}
