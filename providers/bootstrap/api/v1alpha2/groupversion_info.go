// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io

package v1alpha2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group of the bootstrap provider.
	GroupName = "bootstrap.cluster.x-k8s.io"
	// Version is the API version of this package.
	Version = "v1alpha2"
)

var (
	// GroupVersion identifies this package's API group and version.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeBuilder collects the kinds of this package for a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme registers OpenshiftAssistedConfig and
	// OpenshiftAssistedConfigTemplate (and their lists) with a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
