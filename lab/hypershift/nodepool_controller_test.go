package hypershift

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/hypershift/ignitionserver"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// A NodePool of an agent HostedCluster gets its token and user-data
// Secrets (the token opens the ignition server), its AgentMachineTemplate
// and MachineDeployment; scaling it scales the Machines CAPI makes;
// deleting it removes them and its objects.
func TestNodePoolMakesItsMachines(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	hc := h.availableHostedCluster(t)
	cpns := ControlPlaneNamespace(hc)
	np := &hypershiftv1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "np1"},
		Spec: hypershiftv1beta1.NodePoolSpec{
			ClusterName: "hc1", Replicas: ptr.To[int32](0), Release: hc.Spec.Release,
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeReplace},
			Platform: hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{
				AgentLabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "np1"}}}},
		},
	}
	h.create(t, np)
	h.eventually(t, "the NodePool at its version with no replicas", func() bool {
		h.get(t, client.ObjectKeyFromObject(np), np)
		return np.Status.Version != ""
	})
	in := NodePoolObjectsInput{NodePool: np, ControlPlaneNamespace: cpns, InfraID: hc.Spec.InfraID, ReleaseImage: hc.Spec.Release.Image,
		ReleaseVersion: np.Status.Version, PullSecretName: hc.Spec.PullSecret.Name}
	token := &corev1.Secret{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: TokenSecret(in).Name}, token)
	if token.Annotations[IgnitionConfigAnnotation] != "true" || len(token.Data["token"]) == 0 {
		t.Fatalf("token Secret %s: annotations %v", token.Name, token.Annotations)
	}
	in.Token = string(token.Data["token"])
	userData := &corev1.Secret{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: UserDataSecretName(in)}, userData)
	if !strings.Contains(string(userData.Data["value"]), "https://"+hc.Status.IgnitionEndpoint+"/ignition") {
		t.Errorf("user data %s does not point at the ignition endpoint: %s", userData.Name, userData.Data["value"])
	}
	h.expectIgnitionServes(t, hc, in.Token)
	template, err := AgentMachineTemplate(in)
	if err != nil {
		t.Fatal(err)
	}
	amt := &capiagentv1.AgentMachineTemplate{}
	h.get(t, client.ObjectKeyFromObject(template), amt)
	md := &clusterv1beta1.MachineDeployment{}
	h.get(t, client.ObjectKey{Namespace: cpns, Name: "np1"}, md)
	if md.Spec.Template.Spec.InfrastructureRef.Name != amt.Name || ptr.Deref(md.Spec.Template.Spec.Bootstrap.DataSecretName, "") != userData.Name {
		t.Errorf("MachineDeployment template: infrastructure %s, user data %v", md.Spec.Template.Spec.InfrastructureRef.Name,
			md.Spec.Template.Spec.Bootstrap.DataSecretName)
	}

	for _, replicas := range []int32{2, 1} {
		h.scale(t, np, replicas)
		h.eventually(t, strconv.Itoa(int(replicas))+" Machines of the NodePool", func() bool {
			h.get(t, client.ObjectKeyFromObject(md), md)
			machines, err := nodePoolMachines(ctx, h.c, cpns, np)
			return err == nil && ptr.Deref(md.Spec.Replicas, -1) == replicas && len(machines) == int(replicas)
		})
	}
	h.eventually(t, "AllMachinesReady False while no Agent backs them", func() bool {
		h.get(t, client.ObjectKeyFromObject(np), np)
		for _, c := range np.Status.Conditions {
			if c.Type == hypershiftv1beta1.NodePoolAllMachinesReadyConditionType {
				return c.Status == corev1.ConditionFalse
			}
		}
		return false
	})

	if err := h.c.Delete(ctx, np); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the NodePool gone", func() bool {
		return apierrors.IsNotFound(h.c.Get(ctx, client.ObjectKeyFromObject(np), &hypershiftv1beta1.NodePool{}))
	})
	for _, obj := range []client.Object{token, userData, amt} {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after the NodePool's deletion: %v", obj, obj.GetName(), err)
		}
	}
	// CAPI lets the MachineDeployment go once its MachineSets went.
	h.eventually(t, "the MachineDeployment gone", func() bool {
		return apierrors.IsNotFound(h.c.Get(ctx, client.ObjectKeyFromObject(md), md))
	})
}

// A NodePool whose upgrade type the lab does not run says so.
func TestNodePoolInPlaceIsRefused(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	h.availableHostedCluster(t)
	np := &hypershiftv1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "np1"},
		Spec: hypershiftv1beta1.NodePoolSpec{
			ClusterName: "hc1", Replicas: ptr.To[int32](0),
			Release:    hypershiftv1beta1.Release{Image: "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"},
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeInPlace},
			Platform:   hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{}},
		},
	}
	h.create(t, np)
	h.eventually(t, "the InPlace NodePool refused", func() bool {
		h.get(t, client.ObjectKeyFromObject(np), np)
		for _, c := range np.Status.Conditions {
			if c.Type == hypershiftv1beta1.NodePoolUpdateManagementEnabledConditionType {
				return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "upgradeType Replace")
			}
		}
		return false
	})
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "clusters-hc1", Name: "np1"}, &clusterv1beta1.MachineDeployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("MachineDeployment of a refused NodePool: %v", err)
	}
}

// availableHostedCluster is the agent HostedCluster hc1, available.
func (h *hub) availableHostedCluster(t *testing.T, opts ...func(*hypershiftv1beta1.HostedCluster)) *hypershiftv1beta1.HostedCluster {
	t.Helper()
	hc := h.agentHostedCluster(t, opts...)
	h.eventually(t, "the HostedCluster's ignition endpoint", func() bool {
		h.get(t, client.ObjectKeyFromObject(hc), hc)
		return hc.Status.IgnitionEndpoint != "" && hc.Status.KubeConfig != nil
	})
	return hc
}

func (h *hub) scale(t *testing.T, np *hypershiftv1beta1.NodePool, replicas int32) {
	t.Helper()
	h.get(t, client.ObjectKeyFromObject(np), np)
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Replicas = ptr.To(replicas)
	if err := h.c.Patch(context.Background(), np, patch); err != nil {
		t.Fatal(err)
	}
}

// expectIgnitionServes asks the ignition server for the payload with the
// NodePool's token, on loopback, trusting only its CA.
func (h *hub) expectIgnitionServes(t *testing.T, hc *hypershiftv1beta1.HostedCluster, token string) {
	t.Helper()
	ca := &corev1.Secret{}
	h.get(t, client.ObjectKey{Namespace: ControlPlaneNamespace(hc), Name: ignitionserver.CASecretName}, ca)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.Data[corev1.TLSCertKey]) {
		t.Fatal("ignition CA Secret holds no certificate")
	}
	port := hc.Status.IgnitionEndpoint[strings.LastIndex(hc.Status.IgnitionEndpoint, ":")+1:]
	req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+port+"/ignition", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+base64.StdEncoding.EncodeToString([]byte(token)))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ignition server answered the NodePool's token with %d", resp.StatusCode)
	}
}
