package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Fixtures build the objects around the object under test as Cluster API
// and the control plane would, through the API server.

// Namespace creates a fresh namespace for one test. envtest runs no
// namespace controller, so it is left behind with the API server.
func (e *Environment) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// Create creates obj or fails the test.
func (e *Environment) Create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := e.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// Cluster creates a Cluster; provisioned sets its infrastructure
// provisioned as the Cluster controller would.
func (e *Environment) Cluster(t testing.TB, namespace, name string, provisioned bool) *clusterv1.Cluster {
	t.Helper()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api." + name + ".example.com", Port: 6443},
		},
	}
	e.Create(t, c)
	if provisioned {
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		if err := e.Client.Status().Update(context.Background(), c); err != nil {
			t.Fatalf("set Cluster %s provisioned: %v", name, err)
		}
	}
	return c
}

// Machine creates a Machine of cluster whose bootstrap config is an
// OpenshiftAssistedConfig of the Machine's name.
func (e *Environment) Machine(t testing.TB, cluster *clusterv1.Cluster, name string, controlPlane bool) *clusterv1.Machine {
	t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: cluster.Namespace,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Machine", Name: name,
			},
		},
	}
	if controlPlane {
		m.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	e.Create(t, m)
	return m
}

// BootstrapConfig creates an OpenshiftAssistedConfig owned (controller) by owner,
// as the Machine controller leaves it; owner may be nil.
func (e *Environment) BootstrapConfig(t testing.TB, namespace, name, clusterName string, owner client.Object, spec bootstrapv1.OpenshiftAssistedConfigSpec) *bootstrapv1.OpenshiftAssistedConfig {
	t.Helper()
	c := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec:       spec,
	}
	if owner != nil {
		gvk, err := apiutil.GVKForObject(owner, e.Client.Scheme())
		if err != nil {
			t.Fatal(err)
		}
		c.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, gvk)}
	}
	e.Create(t, c)
	return c
}

// ClusterInstall creates what the control plane would: a pull secret, a
// ClusterDeployment labelled with the cluster name and its
// AgentClusterInstall in the given state.
func (e *Environment) ClusterInstall(t testing.TB, cluster *clusterv1.Cluster, state string) (*hivev1.ClusterDeployment, *hiveextv1.AgentClusterInstall) {
	t.Helper()
	ns, name := cluster.Namespace, cluster.Name
	labels := map[string]string{clusterv1.ClusterNameLabel: name}
	e.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-pull-secret", Namespace: ns},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	})
	cd := &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: name, BaseDomain: "example.com",
			Platform:          hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			PullSecretRef:     &corev1.LocalObjectReference{Name: name + "-pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1.GroupName, Version: hiveextv1.Version, Kind: hiveextv1.AgentClusterInstallKind, Name: name},
		},
	}
	e.Create(t, cd)
	aci := &hiveextv1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: hiveextv1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: name},
			ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: 3},
		},
	}
	e.Create(t, aci)
	e.SetInstallState(t, aci, state)
	return cd, aci
}

// SetInstallState sets the AgentClusterInstall's state as assisted-service
// would.
func (e *Environment) SetInstallState(t testing.TB, aci *hiveextv1.AgentClusterInstall, state string) {
	t.Helper()
	err := e.Update(client.ObjectKeyFromObject(aci), aci, func() { aci.Status.DebugInfo.State = state }, true)
	if err != nil {
		t.Fatalf("set install state %q: %v", state, err)
	}
}

// Update gets obj by key, applies change and writes it (its status when
// status is true), retrying on conflicts.
func (e *Environment) Update(key client.ObjectKey, obj client.Object, change func(), status bool) error {
	ctx := context.Background()
	var err error
	for range 10 {
		if err = e.Client.Get(ctx, key, obj); err != nil {
			return err
		}
		change()
		if status {
			err = e.Client.Status().Update(ctx, obj)
		} else {
			err = e.Client.Update(ctx, obj)
		}
		if err == nil || !isConflict(err) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("update %s: %w", key, err)
}

func isConflict(err error) bool { return apierrors.IsConflict(err) }
