package workload

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// TestUpdateMovesNodesInPlace: an accepted update asks every Node, in
// place, for the kubelet of the release's payload; it stays Partial,
// waiting on machine-config, until the Ready control-plane nodes report
// it, not the workers and not a control-plane node that is not Ready; a
// Node that joins later is asked for the cluster's release.
func TestUpdateMovesNodesInPlace(t *testing.T) {
	_, pushed := releasestest.Serve(t, releases.Lab[:2])
	installed, next := pushed[0], pushed[1]
	c := startCluster(t, Options{
		Name:            "cvo-nodes",
		Release:         configv1.Release{Version: installed.Version, Image: installed.Image},
		Payloads:        &release.Remote{},
		UpgradeDuration: time.Second,
	})
	cl := newClient(t, c.RESTConfig())
	ctx := context.Background()
	oldKubelet, newKubelet := "v"+installed.Kubernetes, "v"+next.Kubernetes
	master := addNode(t, cl, "master-0", "node-role.kubernetes.io/master", corev1.ConditionTrue, oldKubelet)
	worker := addNode(t, cl, "worker-0", "node-role.kubernetes.io/worker", corev1.ConditionTrue, oldKubelet)
	deadMaster := addNode(t, cl, "master-1", "node-role.kubernetes.io/master", corev1.ConditionFalse, oldKubelet)
	waitAsked(t, cl, oldKubelet, master, worker, deadMaster)

	w := watchClusterVersion(t, c)
	setDesiredUpdate(t, c, configv1.Update{Image: next.Image})
	waitAsked(t, cl, newKubelet, master, worker, deadMaster)
	held := w.until(t, "the update waiting on machine-config", func(cv *configv1.ClusterVersion) bool {
		p := cvo.FindCondition(cv.Status.Conditions, configv1.OperatorProgressing)
		return p != nil && p.Message == "Working towards "+next.Version+": waiting on machine-config"
	})
	if h := held.Status.History[0]; h.State != configv1.PartialUpdate || h.Version != next.Version {
		t.Fatalf("history head %+v while master-0 runs %s, want Partial %s", h, oldKubelet, next.Version)
	}

	setKubelet(t, cl, master, newKubelet)
	done := w.until(t, next.Version+" Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].State == configv1.CompletedUpdate
	})
	if done.Status.History[0].Version != next.Version {
		t.Errorf("completed %s, want %s", done.Status.History[0].Version, next.Version)
	}
	for _, n := range []*corev1.Node{master, worker, deadMaster} {
		got := &corev1.Node{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
			t.Fatal(err)
		}
		if got.UID != n.UID {
			t.Errorf("Node %s was replaced (UID %s, was %s), want it kept in place", n.Name, got.UID, n.UID)
		}
	}

	joined := addNode(t, cl, "worker-1", "node-role.kubernetes.io/worker", corev1.ConditionTrue, oldKubelet)
	waitAsked(t, cl, newKubelet, joined)
}

// TestAgentAnnotationIsTheOperators: the node agent reads the annotation
// the operator writes; each names it on its own side.
func TestAgentAnnotationIsTheOperators(t *testing.T) {
	if agentapi.DesiredKubeletAnnotation != cvo.DesiredKubeletAnnotation {
		t.Errorf("agent reads %q, operator writes %q", agentapi.DesiredKubeletAnnotation, cvo.DesiredKubeletAnnotation)
	}
}

// addNode creates a Node with a role label, readiness and kubelet version,
// as a kubelet registers one.
func addNode(t *testing.T, cl client.Client, name, role string, ready corev1.ConditionStatus, kubelet string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{role: ""}}}
	if err := cl.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	patchNodeStatus(t, cl, n, corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: kubelet},
	})
	return n
}

func setKubelet(t *testing.T, cl client.Client, n *corev1.Node, kubelet string) {
	t.Helper()
	patchNodeStatus(t, cl, n, corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet}})
}

// patchNodeStatus merges status into the Node's, as a kubelet patches it
// (no conflict with the operator's annotation).
func patchNodeStatus(t *testing.T, cl client.Client, n *corev1.Node, status corev1.NodeStatus) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Status().Patch(context.Background(), n, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		t.Fatalf("Node %s status %+v: %v", n.Name, status, err)
	}
}

// waitAsked waits until every node's DesiredKubeletAnnotation names kubelet.
func waitAsked(t *testing.T, cl client.Client, kubelet string, nodes ...*corev1.Node) {
	t.Helper()
	for _, n := range nodes {
		eventually(t, time.Minute, "Node "+n.Name+" asked for kubelet "+kubelet, func(ctx context.Context) (bool, error) {
			got := &corev1.Node{}
			if err := cl.Get(ctx, types.NamespacedName{Name: n.Name}, got); err != nil {
				return false, err
			}
			n.ResourceVersion = got.ResourceVersion
			return got.Annotations[cvo.DesiredKubeletAnnotation] == kubelet, nil
		})
	}
}
