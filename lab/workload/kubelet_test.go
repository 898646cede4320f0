package workload

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// kubelet plays a node agent: it holds a node's identity and does what a
// kubelet does to the API (register, post Ready, renew the Lease).
type kubelet struct {
	name string
	cs   kubernetes.Interface
}

func newKubelet(t testing.TB, c *Cluster, name string) *kubelet {
	t.Helper()
	raw, err := c.IssueNodeKubeconfig(name, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kubelet{name: name, cs: cs}
}

func (k *kubelet) node() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.name, Labels: map[string]string{
			"kubernetes.io/hostname": k.name,
			"kubernetes.io/os":       "linux",
			"kubernetes.io/arch":     "amd64",
		}},
		Spec: corev1.NodeSpec{ProviderID: "baremetalhost:///openshift-machine-api/" + k.name},
	}
}

// register creates the Node, posts its status and creates its Lease.
func (k *kubelet) register(ctx context.Context) error {
	if _, err := k.cs.CoreV1().Nodes().Create(ctx, k.node(), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := k.postReady(ctx); err != nil {
		return err
	}
	return k.renewLease(ctx)
}

// postReady sets Ready=True with a fresh heartbeat, plus capacity and
// addresses, as a kubelet does: a strategic merge patch of the status
// subresource (an update would carry the taints it read, which
// NodeRestriction refuses once the controller manager changed them).
func (k *kubelet) postReady(ctx context.Context) error {
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	patch, err := json.Marshal(map[string]any{"status": corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Capacity:    capacity,
		Allocatable: capacity,
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeHostName, Address: k.name},
			{Type: corev1.NodeInternalIP, Address: "10.0.2.15"},
		},
	}})
	if err != nil {
		return err
	}
	_, err = k.cs.CoreV1().Nodes().Patch(ctx, k.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// renewLease creates the node's Lease in kube-node-lease or renews it.
func (k *kubelet) renewLease(ctx context.Context) error {
	leases := k.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, k.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: k.name, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(k.name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// heartbeat renews the Lease every interval until ctx ends, as a running
// kubelet does.
func (k *kubelet) heartbeat(ctx context.Context, t testing.TB, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("kubelet %s: renew lease: %v", k.name, err)
			}
		}
	}
}
