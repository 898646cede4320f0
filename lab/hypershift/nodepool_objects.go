package hypershift

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// Annotations HyperShift's NodePool controller writes.
const (
	// NodePoolAnnotation names the NodePool (<namespace>/<name>) on the
	// objects made for it and, through the MachineDeployment's template,
	// on its Machines.
	NodePoolAnnotation = "hypershift.openshift.io/nodePool"
	// ReleaseVersionAnnotation is the OpenShift version a Machine
	// installs, on the MachineDeployment's template.
	ReleaseVersionAnnotation = "hypershift.openshift.io/release-version"
	// IgnitionConfigAnnotation marks the token Secrets the ignition
	// server serves.
	IgnitionConfigAnnotation = "hypershift.openshift.io/ignition-config"
	// UpgradeTypeAnnotation is the NodePool's upgrade type on its token.
	UpgradeTypeAnnotation = "hypershift.openshift.io/node-pool-upgrade-type"
)

// NodePoolObjectsInput is what a NodePool's management-side objects are
// made from.
type NodePoolObjectsInput struct {
	NodePool *hypershiftv1beta1.NodePool
	// ControlPlaneNamespace of the NodePool's HostedCluster.
	ControlPlaneNamespace string
	// InfraID is the HostedCluster's: the CAPI Cluster's name.
	InfraID string
	// ReleaseImage and ReleaseVersion are the release the NodePool's
	// nodes install.
	ReleaseImage, ReleaseVersion string
	// PullSecretName is the HostedCluster's pull secret.
	PullSecretName string
	// IgnitionEndpoint is the HostedCluster's status.ignitionEndpoint
	// (host:port) and IgnitionCA its ignition server's CA.
	IgnitionEndpoint string
	IgnitionCA       []byte
	// Token is the NodePool's ignition token (a UUID).
	Token string
}

// nodePoolKey is <namespace>/<name>, as HyperShift writes it.
func (in NodePoolObjectsInput) nodePoolKey() string {
	return client.ObjectKeyFromObject(in.NodePool).String()
}

// ConfigHash is the hash of what the NodePool's nodes are configured
// with, which names its token and user-data Secrets and rides on the
// ignition request as TargetConfigVersionHash. HyperShift hashes the
// machine configs, the release version, the pull secret's and trust
// bundle's names, the global config and the RHEL stream
// (nodepool/config.go Hash); the lab has no machine configs, trust bundle
// or stream, and hashes the release image, its version and the pull
// secret's name.
func (in NodePoolObjectsInput) ConfigHash() string {
	return hashSimple(in.ReleaseImage + in.ReleaseVersion + in.PullSecretName)
}

// AgentMachineTemplate is the NodePool's infrastructure template: the
// NodePool's Agent label selector, named <nodepool>-<hash of its spec>
// so that a changed selector makes a new template and rolls the Machines
// (nodepool/agent.go, capi.go machineTemplateBuilders).
func AgentMachineTemplate(in NodePoolObjectsInput) (*agentv1beta1.AgentMachineTemplate, error) {
	spec := agentv1beta1.AgentMachineTemplateSpec{}
	if a := in.NodePool.Spec.Platform.Agent; a != nil && a.AgentLabelSelector != nil {
		spec.Template.Spec.AgentLabelSelector = a.AgentLabelSelector.DeepCopy()
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("AgentMachineTemplate of NodePool %s: %w", in.nodePoolKey(), err)
	}
	return &agentv1beta1.AgentMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   in.ControlPlaneNamespace,
			Name:        boundedName(in.NodePool.Name, hashSimple(raw), validation.DNS1123SubdomainMaxLength),
			Annotations: map[string]string{NodePoolAnnotation: in.nodePoolKey()},
		},
		Spec: spec,
	}, nil
}

// machineSetLabel is the label HyperShift puts on a NodePool's Machines
// (its MachineDeployment's selector): key and value both
// <infraID>-<cluster>-<nodepool>, bounded to 43 characters (nodepool
// generateName).
func (in NodePoolObjectsInput) machineSetLabel() string {
	return boundedName(in.InfraID+"-"+in.NodePool.Spec.ClusterName, in.NodePool.Name, 43)
}

// MachineDeployment is the NodePool's v1beta1 MachineDeployment, named as
// the NodePool, with HyperShift's labels, annotations, selector, template
// and strategy (nodepool/capi.go reconcileMachineDeployment). Replicas
// follow spec.replicas; the autoscaler's size annotations are "0" as for
// a NodePool without autoscaling, the only kind the lab runs.
func MachineDeployment(in NodePoolObjectsInput, template *agentv1beta1.AgentMachineTemplate) *clusterv1beta1.MachineDeployment {
	np := in.NodePool
	selector := in.machineSetLabel()
	labels := map[string]string{clusterv1beta1.ClusterNameLabel: in.InfraID, selector: selector}
	md := &clusterv1beta1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: in.ControlPlaneNamespace,
			Name:      np.Name,
			Labels:    map[string]string{clusterv1beta1.ClusterNameLabel: in.InfraID},
			Annotations: map[string]string{
				NodePoolAnnotation:                         in.nodePoolKey(),
				clusterv1beta1.AutoscalerMinSizeAnnotation: "0",
				clusterv1beta1.AutoscalerMaxSizeAnnotation: "0",
			},
		},
		Spec: clusterv1beta1.MachineDeploymentSpec{
			ClusterName: in.InfraID,
			Replicas:    ptr.To(ptr.Deref(np.Spec.Replicas, 0)),
			Selector:    metav1.LabelSelector{MatchLabels: labels},
			Strategy:    rollingUpdate(np),
			Template: clusterv1beta1.MachineTemplateSpec{
				ObjectMeta: clusterv1beta1.ObjectMeta{
					Labels: map[string]string{clusterv1beta1.ClusterNameLabel: in.InfraID, selector: selector},
					Annotations: map[string]string{
						NodePoolAnnotation:       in.nodePoolKey(),
						ReleaseVersionAnnotation: in.ReleaseVersion,
					},
				},
				Spec: clusterv1beta1.MachineSpec{
					ClusterName: in.InfraID,
					Version:     ptr.To(in.ReleaseVersion),
					Bootstrap:   clusterv1beta1.Bootstrap{DataSecretName: ptr.To(UserDataSecretName(in))},
					InfrastructureRef: corev1.ObjectReference{
						APIVersion: agentv1beta1.GroupVersion.String(), Kind: "AgentMachineTemplate",
						Namespace: template.Namespace, Name: template.Name,
					},
					NodeDrainTimeout:        np.Spec.NodeDrainTimeout,
					NodeVolumeDetachTimeout: np.Spec.NodeVolumeDetachTimeout,
				},
			},
		},
	}
	return md
}

// rollingUpdate is the NodePool's replace strategy: its own rolling
// update settings, else one extra Machine at a time and none unavailable.
func rollingUpdate(np *hypershiftv1beta1.NodePool) *clusterv1beta1.MachineDeploymentStrategy {
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	if r := np.Spec.Management.Replace; r != nil && r.RollingUpdate != nil {
		if r.RollingUpdate.MaxSurge != nil {
			surge = *r.RollingUpdate.MaxSurge
		}
		if r.RollingUpdate.MaxUnavailable != nil {
			unavailable = *r.RollingUpdate.MaxUnavailable
		}
	}
	return &clusterv1beta1.MachineDeploymentStrategy{
		Type:          clusterv1beta1.RollingUpdateMachineDeploymentStrategyType,
		RollingUpdate: &clusterv1beta1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
	}
}

// UserDataSecretName is user-data-<nodepool>-<config hash>.
func UserDataSecretName(in NodePoolObjectsInput) string {
	return "user-data-" + in.NodePool.Name + "-" + in.ConfigHash()
}

// TokenSecret holds the NodePool's ignition token, which the ignition
// server looks up, with the release it is for (nodepool/token.go). Left
// out: the machine config payload and the hashes of pull secret, trust
// bundle, configuration and cloud config, which only HyperShift's
// ignition server reads, and the generation-time annotation.
func TokenSecret(in NodePoolObjectsInput) *corev1.Secret {
	upgrade := string(in.NodePool.Spec.Management.UpgradeType)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: in.ControlPlaneNamespace,
			Name:      "token-" + in.NodePool.Name + "-" + in.ConfigHash(),
			Annotations: map[string]string{
				IgnitionConfigAnnotation: "true",
				UpgradeTypeAnnotation:    upgrade,
				NodePoolAnnotation:       in.nodePoolKey(),
			},
		},
		Immutable: ptr.To(false),
		Data: map[string][]byte{
			"token":           []byte(in.Token),
			"release":         []byte(in.ReleaseImage),
			"release-version": []byte(in.ReleaseVersion),
		},
	}
}

// UserDataSecret is what the NodePool's Machines boot with: a pointer
// Ignition to https://<endpoint>/ignition with the token (base64) as
// bearer, the NodePool and the config hash as headers, and the ignition
// server's CA (nodepool/token.go reconcileUserDataSecret, ignConfig).
func UserDataSecret(in NodePoolObjectsInput) (*corev1.Secret, error) {
	pointer, err := agentapi.NewPointerIgnition("https://"+in.IgnitionEndpoint+"/ignition", map[string]string{
		"Authorization":           "Bearer " + base64.StdEncoding.EncodeToString([]byte(in.Token)),
		"NodePool":                in.nodePoolKey(),
		"TargetConfigVersionHash": in.ConfigHash(),
	}, in.IgnitionCA)
	if err != nil {
		return nil, fmt.Errorf("user data of NodePool %s: %w", in.nodePoolKey(), err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   in.ControlPlaneNamespace,
			Name:        UserDataSecretName(in),
			Annotations: map[string]string{NodePoolAnnotation: in.nodePoolKey()},
		},
		Immutable: ptr.To(false),
		Data: map[string][]byte{
			"disableTemplating": []byte(base64.StdEncoding.EncodeToString([]byte("true"))),
			"value":             pointer,
		},
	}, nil
}
