package conformance_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
	"github.com/paritylab/paritylab/suites/conformance"
)

// The OpenShift assisted providers against the contracts. What is theirs
// alone is here: the assisted-service install the bootstrap provider needs
// before it has discovery data (Prepare), and the install finishing that
// initializes the control plane (Initialize).
var _ = Describe("OpenShift assisted providers", Label("conformance"), func() {
	ctx := context.Background()
	Context("bootstrap provider", Label("bootstrap"), func() {
		conformance.BootstrapProviderSpec(ctx, func() conformance.BootstrapProviderSpecInput {
			return conformance.BootstrapProviderSpecInput{
				Client:    shared.client,
				ConfigGVK: bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig"),
				NewConfig: func(string, string) *unstructured.Unstructured {
					return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"cpuArchitecture": "x86_64"}}}
				},
				ControlPlaneMachine: true,
				Prepare:             prepareAssistedInstall,
			}
		})
	})
	Context("control-plane provider", Label("controlplane"), func() {
		conformance.ControlPlaneProviderSpec(ctx, func() conformance.ControlPlaneProviderSpecInput {
			return conformance.ControlPlaneProviderSpecInput{
				Client:                        shared.client,
				ControlPlaneGVK:               controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"),
				InfrastructureMachineTemplate: conformanceMachineTemplate,
				NewControlPlane:               newOpenshiftAssistedControlPlane,
				Initialize:                    finishInstall,
				ExpectVersion:                 true,
			}
		})
	})
})

// prepareAssistedInstall does what the control plane and assisted-service
// would for the bootstrap provider: a ClusterDeployment with its
// AgentClusterInstall, and, once the provider made the Machine's InfraEnv,
// its discovery image.
func prepareAssistedInstall(ctx context.Context, in conformance.PrepareInput) error {
	c, ns, name := shared.client, in.Cluster.Namespace, in.Cluster.Name
	labels := map[string]string{clusterv1.ClusterNameLabel: name}
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
		},
		newClusterDeployment(ns, name, labels),
		&hiveextv1.AgentClusterInstall{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: hiveextv1.AgentClusterInstallSpec{
				ClusterDeploymentRef:  corev1.LocalObjectReference{Name: name},
				ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: 1},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T: %w", o, err)
		}
	}
	ie := &agentv1.InfraEnv{}
	key := client.ObjectKey{Namespace: ns, Name: in.Machine.Name}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, ie); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		ie.Status.ISODownloadURL = "http://assisted.example/" + ie.Name + ".iso"
		ie.Status.BootArtifacts.DiscoveryIgnitionURL = shared.ignition.URL + "/" + ie.Name
		ie.Status.Conditions = []conditionsv1.Condition{{
			Type: agentv1.ConditionImageCreated, Status: corev1.ConditionTrue, Reason: agentv1.ReasonImageCreated,
			LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now(),
		}}
		return c.Status().Update(ctx, ie) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the Machine's InfraEnv %s: %w", key, err)
	}
	return nil
}

// newClusterDeployment is an agent platform ClusterDeployment whose install
// is the AgentClusterInstall of the same name.
func newClusterDeployment(namespace, name string, labels map[string]string) *hivev1.ClusterDeployment {
	return &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: name, BaseDomain: "example.com",
			Platform:          hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			PullSecretRef:     &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1.GroupName, Version: hiveextv1.Version, Kind: hiveextv1.AgentClusterInstallKind, Name: name},
		},
	}
}

// conformanceMachineTemplate creates the schemaless infrastructure template.
func conformanceMachineTemplate(ctx context.Context, namespace string) (clusterv1.ContractVersionedObjectReference, error) {
	t := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"size": "large"}}}}}
	t.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1alpha1")
	t.SetKind("ConformanceMachineTemplate")
	t.SetNamespace(namespace)
	t.SetName("control-plane")
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: t.GetKind(), Name: t.GetName()}
	return ref, shared.client.Create(ctx, t)
}

func newOpenshiftAssistedControlPlane(_, _ string, infra clusterv1.ContractVersionedObjectReference) *unstructured.Unstructured {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			controlplanev1.ReleaseImageRepositoryAnnotation: shared.registry.Host() + "/" + releaseRepository,
		}},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: distributionVersion,
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: infra},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain: "example.com", APIVIPs: []string{"192.0.2.5"}, IngressVIPs: []string{"192.0.2.6"},
			},
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cp)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// finishInstall does what assisted-service does when the install is done:
// it publishes the admin kubeconfig (the hub's own, standing in for the
// workload cluster's) and reports the install installed.
func finishInstall(ctx context.Context, cluster *clusterv1.Cluster) error {
	c := shared.client
	admin := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name + "-admin-kubeconfig", Namespace: cluster.Namespace},
		Data:       map[string][]byte{"kubeconfig": shared.kubeconfig},
	}
	if err := c.Create(ctx, admin); err != nil {
		return err
	}
	aci := &hiveextv1.AgentClusterInstall{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, aci); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		aci.Spec.ClusterMetadata = &hivev1.ClusterMetadata{ClusterID: "id", InfraID: "infra", AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: admin.Name}}
		if err := c.Update(ctx, aci); err != nil {
			return false, nil
		}
		aci.Status.DebugInfo.State = hiveextv1.ClusterStateInstalled
		return c.Status().Update(ctx, aci) == nil, nil
	})
}
