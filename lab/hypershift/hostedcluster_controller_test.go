package hypershift

import (
	"context"
	"strconv"
	"strings"
	"testing"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/hypershift/ignitionserver"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// A HostedCluster on the agent platform gets what HyperShift makes for
// it: IDs and finalizer, the control-plane namespace with its Secrets, a
// running hosted API server reached through admin-kubeconfig, the
// HostedControlPlane (platform None, ready), the ignition endpoint, the
// AgentCluster, the v1beta1 CAPI Cluster and the agent RBAC; its status
// says it is available. Deleting it stops the control plane and removes
// what the lab recorded for it.
func TestHostedClusterGetsItsControlPlane(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	hc := h.agentHostedCluster(t)
	defer func() {
		if t.Failed() {
			t.Logf("HostedCluster status: %+v", hc.Status)
		}
	}()
	h.eventually(t, "the HostedCluster available", func() bool {
		h.get(t, client.ObjectKeyFromObject(hc), hc)
		return meta.IsStatusConditionTrue(hc.Status.Conditions, string(hypershiftv1beta1.HostedClusterAvailable)) &&
			hc.Status.KubeConfig != nil && hc.Status.IgnitionEndpoint != ""
	})
	cpns := "clusters-hc1"
	if hc.Spec.ClusterID == "" || !strings.HasPrefix(hc.Spec.InfraID, "hc1-") || len(hc.Spec.InfraID) != len("hc1-")+5 {
		t.Errorf("clusterID %q infraID %q, want both defaulted (infraID hc1-<5 random>)", hc.Spec.ClusterID, hc.Spec.InfraID)
	}
	if !strings.HasPrefix(hc.Status.IgnitionEndpoint, "127.0.0.1:") {
		t.Errorf("ignition endpoint %q, want the host's loopback, as the hub names lab services", hc.Status.IgnitionEndpoint)
	}
	for _, c := range []hypershiftv1beta1.ConditionType{hypershiftv1beta1.ValidHostedClusterConfiguration, hypershiftv1beta1.ReconciliationSucceeded,
		hypershiftv1beta1.IgnitionEndpointAvailable, hypershiftv1beta1.KubeAPIServerAvailable} {
		if !meta.IsStatusConditionTrue(hc.Status.Conditions, string(c)) {
			t.Errorf("condition %s not True: %+v", c, meta.FindStatusCondition(hc.Status.Conditions, string(c)))
		}
	}

	ns := &corev1.Namespace{}
	h.get(t, client.ObjectKey{Name: cpns}, ns)
	if ns.Labels["hypershift.openshift.io/hosted-control-plane"] != "true" {
		t.Errorf("control-plane namespace labels %v", ns.Labels)
	}
	pull := &corev1.Secret{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: PullSecretName}, pull)
	if pull.Type != corev1.SecretTypeDockerConfigJson || pull.Annotations[ClusterAnnotation] != "clusters/hc1" {
		t.Errorf("pull-secret copy: type %q annotations %v", pull.Type, pull.Annotations)
	}

	hosted := h.hostedClient(t, client.ObjectKey{Namespace: cpns, Name: AdminKubeconfigSecretName})
	if err := hosted.List(ctx, &corev1.NamespaceList{}); err != nil {
		t.Errorf("the admin kubeconfig does not reach the hosted API server: %v", err)
	}
	copied := &corev1.Secret{}
	h.get(t, client.ObjectKey{Namespace: "clusters", Name: hc.Status.KubeConfig.Name}, copied)
	if copied.Labels["team"] != "edge" || len(copied.OwnerReferences) != 1 || copied.OwnerReferences[0].UID != hc.UID || len(copied.Data[KubeconfigKey]) == 0 {
		t.Errorf("%s: labels %v owners %v keys %d", copied.Name, copied.Labels, copied.OwnerReferences, len(copied.Data))
	}

	hcp := &hypershiftv1beta1.HostedControlPlane{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: "hc1"}, hcp)
	api := h.op.HostedAPI(types.NamespacedName{Namespace: "clusters", Name: "hc1"})
	if api == nil {
		t.Fatal("no hosted API server runs")
	}
	if hcp.Spec.Platform.Type != hypershiftv1beta1.NonePlatform || hcp.Spec.Platform.Agent == nil || hcp.Spec.PullSecret.Name != PullSecretName ||
		hcp.Spec.InfraID != hc.Spec.InfraID || hcp.Labels["api.openshift.com/id"] != "abc" || hcp.Labels["team"] != "" {
		t.Errorf("HostedControlPlane spec platform %q pull secret %q infraID %q labels %v", hcp.Spec.Platform.Type, hcp.Spec.PullSecret.Name,
			hcp.Spec.InfraID, hcp.Labels)
	}
	ep := hcp.Status.ControlPlaneEndpoint
	if !hcp.Status.Ready || !hcp.Status.Initialized || ep.Host != "10.0.2.2" || !strings.HasSuffix(api.Server(), ":"+strconv.Itoa(int(ep.Port))) ||
		hcp.Status.KubeConfig == nil || hcp.Status.KubeConfig.Name != AdminKubeconfigSecretName {
		t.Errorf("HostedControlPlane status ready %v initialized %v endpoint %+v (API %s) kubeconfig %+v", hcp.Status.Ready,
			hcp.Status.Initialized, ep, api.Server(), hcp.Status.KubeConfig)
	}
	if hc.Status.ControlPlaneEndpoint != ep || hc.Status.Version == nil || hc.Status.Version.Desired.Version == "" {
		t.Errorf("HostedCluster endpoint %+v version %+v, want the control plane's", hc.Status.ControlPlaneEndpoint, hc.Status.Version)
	}

	ac := &capiagentv1.AgentCluster{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: "hc1"}, ac)
	if ie := ac.Spec.IgnitionEndpoint; ie == nil || ie.Url != "https://"+hc.Status.IgnitionEndpoint+"/ignition" ||
		ie.CaCertificateReference == nil || *ie.CaCertificateReference != (capiagentv1.CaCertificateReference{Namespace: cpns, Name: ignitionserver.CASecretName}) {
		t.Errorf("AgentCluster ignition endpoint %+v", ie)
	}
	if ac.Spec.ControlPlaneEndpoint.Host != ep.Host || ac.Spec.ControlPlaneEndpoint.Port != ep.Port {
		t.Errorf("AgentCluster control plane endpoint %+v, want %+v", ac.Spec.ControlPlaneEndpoint, ep)
	}
	// The hosted cluster's agent provider makes the AgentCluster ready
	// with its imported ClusterDeployment, once CAPI owns it to the Cluster.
	h.eventually(t, "the AgentCluster ready", func() bool {
		h.get(t, client.ObjectKeyFromObject(ac), ac)
		return ac.Status.Ready && ac.Status.ClusterDeploymentRef.Name != ""
	})
	cl := &clusterv1beta1.Cluster{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: hc.Spec.InfraID}, cl)
	if r := cl.Spec.ControlPlaneRef; r == nil || r.Kind != "HostedControlPlane" || r.Name != "hc1" || r.APIVersion != "hypershift.openshift.io/v1beta1" {
		t.Errorf("CAPI Cluster controlPlaneRef %+v", r)
	}
	if r := cl.Spec.InfrastructureRef; r == nil || r.Kind != "AgentCluster" || r.Name != "hc1" {
		t.Errorf("CAPI Cluster infrastructureRef %+v", r)
	}
	rb := &rbacv1.RoleBinding{}
	h.get(t, client.ObjectKey{Namespace: "hardware", Name: "cluster-api-agent-" + cpns}, rb)
	if rb.RoleRef.Name != "capi-provider-role-"+cpns || len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != cpns || rb.Labels[agentRBACLabel] != "true" {
		t.Errorf("agent RoleBinding %+v", rb)
	}
	h.expectBootstrapCredential(t, types.NamespacedName{Namespace: "clusters", Name: "hc1"})
	if len(h.ledger.Record().Resources) == 0 {
		t.Error("the hosted control plane is not in the lab's ledger")
	}

	// Deleting the HostedCluster deletes its NodePools first.
	np := &hypershiftv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "np1"},
		Spec: hypershiftv1beta1.NodePoolSpec{ClusterName: "hc1", Release: hc.Spec.Release,
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeReplace},
			Platform:   hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{}}}}
	h.create(t, np)
	h.eventually(t, "the NodePool's MachineDeployment", func() bool {
		return h.c.Get(ctx, client.ObjectKey{Namespace: cpns, Name: "np1"}, &clusterv1beta1.MachineDeployment{}) == nil
	})
	if err := h.c.Delete(ctx, hc); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the HostedCluster gone", func() bool {
		return apierrors.IsNotFound(h.c.Get(ctx, client.ObjectKeyFromObject(hc), &hypershiftv1beta1.HostedCluster{}))
	})
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(np), np); !apierrors.IsNotFound(err) {
		t.Errorf("NodePool after its HostedCluster's deletion: %v", err)
	}
	if h.op.HostedAPI(types.NamespacedName{Namespace: "clusters", Name: "hc1"}) != nil {
		t.Error("the hosted control plane still runs")
	}
	if err := hosted.List(ctx, &corev1.NamespaceList{}); err == nil {
		t.Error("the hosted API server still answers")
	}
	if res := h.ledger.Record().Resources; len(res) != 0 {
		t.Errorf("ledger still holds %v", res)
	}
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(rb), &rbacv1.RoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("agent RoleBinding after delete: %v", err)
	}
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(cl), &clusterv1beta1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("CAPI Cluster after delete: %v", err)
	}
}

// A HostedCluster the lab cannot host is refused in its status, with
// what to fix, and nothing is made for it.
func TestHostedClusterOnAnotherPlatformIsInvalid(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	hc := h.agentHostedCluster(t)
	hc2 := &hypershiftv1beta1.HostedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "hc2"}, Spec: *hc.Spec.DeepCopy()}
	hc2.Spec.Platform = hypershiftv1beta1.PlatformSpec{Type: hypershiftv1beta1.NonePlatform}
	h.create(t, hc2)
	h.eventually(t, "hc2 refused", func() bool {
		h.get(t, client.ObjectKeyFromObject(hc2), hc2)
		c := meta.FindStatusCondition(hc2.Status.Conditions, string(hypershiftv1beta1.ValidHostedClusterConfiguration))
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "set spec.platform.type to Agent")
	})
	if err := h.c.Get(ctx, client.ObjectKey{Name: "clusters-hc2"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("control-plane namespace of a refused HostedCluster: %v", err)
	}
	if len(hc2.Finalizers) != 0 || hc2.Spec.InfraID != "" {
		t.Errorf("refused HostedCluster was defaulted: finalizers %v infraID %q", hc2.Finalizers, hc2.Spec.InfraID)
	}
}

// hostedClient is a client of the hosted cluster from the kubeconfig in
// a Secret.
func (h *hub) hostedClient(t *testing.T, key client.ObjectKey) client.Client {
	t.Helper()
	s := &corev1.Secret{}
	h.get(t, key, s)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expectBootstrapCredential checks the node config the ignition server
// serves: a node-bootstrapper credential that may create a CSR in the
// hosted cluster and may not read its Nodes.
func (h *hub) expectBootstrapCredential(t *testing.T, key types.NamespacedName) {
	t.Helper()
	c, node := h.bootstrapperClient(t, key)
	if !node.Bootstrap || node.APIHost != "" || !node.ReadyBeforeProviderID {
		t.Errorf("bootstrap node config: bootstrap %v API host %q (want the guest's gateway, empty) ready before providerID %v",
			node.Bootstrap, node.APIHost, node.ReadyBeforeProviderID)
	}
	csr := nodeClientCSR(t, "test")
	if err := c.Create(context.Background(), csr); err != nil {
		t.Errorf("the node-bootstrapper credential cannot create a CSR: %v", err)
	} else if csr.Spec.Username != "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper" {
		t.Errorf("CSR requested by %q", csr.Spec.Username)
	}
	if err := c.List(context.Background(), &corev1.NodeList{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node-bootstrapper credential listing Nodes: %v, want forbidden", err)
	}
}

// bootstrapperClient is a client of the hosted cluster with the
// credential of the node config its ignition server serves, at the host
// address of the hosted API server.
func (h *hub) bootstrapperClient(t *testing.T, key types.NamespacedName) (client.Client, agentapi.NodeConfig) {
	t.Helper()
	h.op.mu.Lock()
	rt := h.op.hosted[key]
	h.op.mu.Unlock()
	node, err := h.op.bootstrapNode(rt)
	if err != nil {
		t.Fatal(err)
	}
	if node.APIPort != rt.apiPort {
		t.Errorf("bootstrap node config API port %d, want the hosted API server's %d", node.APIPort, rt.apiPort)
	}
	cfg := &rest.Config{Host: rt.cluster.Server(), TLSClientConfig: rest.TLSClientConfig{ServerName: node.TLSServerName,
		CAData: []byte(node.CACert), CertData: []byte(node.ClientCert), KeyData: []byte(node.ClientKey)}}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, node
}
