package workload

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestNodeLifecycle plays two kubelets: one keeps heartbeating, one stops.
// The real kube-controller-manager must mark the silent node NotReady
// (Unknown) and taint it unreachable, and take that back once it
// heartbeats again. The steady node keeps its zone out of "full
// disruption", in which the node lifecycle controller withholds the
// NoExecute taint, as in any cluster with more than one node.
func TestNodeLifecycle(t *testing.T) {
	c := startCluster(t, Options{Name: "lifecycle"})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	steady, stopping := newKubelet(t, c, "steady"), newKubelet(t, c, "stopping")
	for _, k := range []*kubelet{steady, stopping} {
		if err := k.register(ctx); err != nil {
			t.Fatalf("register %s: %v", k.name, err)
		}
	}
	wg.Add(1)
	go func() { defer wg.Done(); steady.heartbeat(ctx, t, 2*time.Second) }()

	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := stopping.renewLease(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	waitNode(t, admin, "stopping", "Ready=Unknown with both unreachable taints", func(n *corev1.Node) bool {
		return readyStatus(n) == corev1.ConditionUnknown &&
			hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule) &&
			hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	})
	n, err := admin.CoreV1().Nodes().Get(ctx, "steady", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if readyStatus(n) != corev1.ConditionTrue || len(n.Spec.Taints) != 0 {
		t.Errorf("steady node: Ready=%s taints %v, want Ready=True untainted", readyStatus(n), n.Spec.Taints)
	}

	// The kubelet comes back: posts Ready and renews its lease again.
	if err := stopping.postReady(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); stopping.heartbeat(ctx, t, 2*time.Second) }()
	waitNode(t, admin, "stopping", "Ready=True without unreachable taints", func(n *corev1.Node) bool {
		return readyStatus(n) == corev1.ConditionTrue && !hasTaint(n, corev1.TaintNodeUnreachable, "")
	})
}

// waitNode waits generously: the grace period is 20s, the controller
// checks every 5s and evicts (taints NoExecute) at a rate limit.
func waitNode(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Node) bool) {
	t.Helper()
	eventually(t, 3*time.Minute, fmt.Sprintf("node %s %s", name, what), func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if cond(n) {
			return true, nil
		}
		return false, fmt.Errorf("Ready=%s taints %v", readyStatus(n), n.Spec.Taints)
	})
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// hasTaint reports a taint by key and, unless empty, effect.
func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && (effect == "" || t.Effect == effect) {
			return true
		}
	}
	return false
}
