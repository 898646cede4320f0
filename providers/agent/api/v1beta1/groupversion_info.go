// +kubebuilder:object:generate=true
// +groupName=capi-provider.agent-install.openshift.io

package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group the agent infrastructure provider serves.
	GroupName = "capi-provider.agent-install.openshift.io"
	// Version is the API version of this package.
	Version = "v1beta1"
)

var (
	// GroupVersion identifies this package's API group and version.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeBuilder collects the kinds of this package for a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme registers AgentCluster, AgentMachine and
	// AgentMachineTemplate (and their lists) with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
