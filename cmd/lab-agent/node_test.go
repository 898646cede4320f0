package main

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/workload"
)

// TestNodeTakesTheKubeletItsNodeAsksFor: against a real API server, the
// node agent registers with its configured kubelet version and, once its
// Node asks for another (the lab version operator's machine config),
// reports that one on the same Node: at once through its watch of the
// Node, and on its next heartbeat should the watch not run.
func TestNodeTakesTheKubeletItsNodeAsksFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := workload.Start(ctx, workload.Options{Name: "agent-node", Dir: filepath.Join(t.TempDir(), "spoke")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop workload cluster: %v", err)
		}
	})
	n, err := newNode(fakeSystem(t), nodeConfig(t, c, "worker-0", "v1.34.4"))
	if err != nil {
		t.Fatal(err)
	}
	if !n.register(ctx) || !n.heartbeat(ctx) {
		t.Fatal("node did not register and post its status")
	}
	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	before := reportedKubelet(ctx, t, admin, "worker-0")
	if v := before.Status.NodeInfo.KubeletVersion; v != "v1.34.4" {
		t.Fatalf("registered with kubelet %q, want the configured v1.34.4", v)
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() { defer close(watching); n.followDesiredKubelet(watchCtx) }()
	askKubelet(ctx, t, admin, "worker-0", "v1.34.5")
	deadline := time.Now().Add(30 * time.Second)
	for reportedKubelet(ctx, t, admin, "worker-0").Status.NodeInfo.KubeletVersion != "v1.34.5" {
		if time.Now().After(deadline) {
			t.Fatal("the Node did not report kubelet v1.34.5 within 30s of asking for it, with no heartbeat")
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopWatch()
	<-watching

	askKubelet(ctx, t, admin, "worker-0", "v1.34.6")
	if !n.heartbeat(ctx) {
		t.Fatal("heartbeat failed")
	}
	after := reportedKubelet(ctx, t, admin, "worker-0")
	if v := after.Status.NodeInfo.KubeletVersion; v != "v1.34.6" {
		t.Errorf("after one heartbeat the Node reports kubelet %q, want v1.34.6", v)
	}
	if after.UID != before.UID {
		t.Errorf("Node replaced: UID %s, was %s", after.UID, before.UID)
	}
}

func askKubelet(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, kubelet string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{"` + agentapi.DesiredKubeletAnnotation + `":"` + kubelet + `"}}}`
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func reportedKubelet(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	nd, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// nodeConfig is what the lab gives a node agent for name: its own
// identity on the cluster, kubelet version kubelet.
func nodeConfig(t *testing.T, c *workload.Cluster, name, kubelet string) agentapi.NodeConfig {
	t.Helper()
	raw, err := c.IssueNodeKubeconfig(name, "")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	kctx := kc.Contexts[kc.CurrentContext]
	cluster, user := kc.Clusters[kctx.Cluster], kc.AuthInfos[kctx.AuthInfo]
	u, err := url.Parse(cluster.Server)
	if err != nil {
		t.Fatal(err)
	}
	host, portText, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatal(err)
	}
	return agentapi.NodeConfig{
		Name: name, APIHost: host, APIPort: port, TLSServerName: "kubernetes",
		CACert: string(cluster.CertificateAuthorityData), ClientCert: string(user.ClientCertificateData), ClientKey: string(user.ClientKeyData),
		KubeletVersion: kubelet,
	}
}
