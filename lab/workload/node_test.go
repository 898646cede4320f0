package workload

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

func TestNodeIdentity(t *testing.T) {
	c := startCluster(t, Options{Name: "identity"})
	ctx := context.Background()

	t.Run("certificate", func(t *testing.T) { checkNodeCertificate(t, c) })

	self := newKubelet(t, c, "worker-0")
	if err := self.register(ctx); err != nil {
		t.Fatalf("node registers itself, posts status and creates its lease: %v", err)
	}
	if err := self.renewLease(ctx); err != nil {
		t.Fatalf("node renews its lease: %v", err)
	}
	if _, err := self.cs.CoreV1().Nodes().Patch(ctx, self.name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"node.kubernetes.io/instance-type":"lab"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("node labels itself with an allowed label: %v", err)
	}
	if _, err := self.cs.CoreV1().Nodes().Patch(ctx, self.name, types.StrategicMergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}`),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("node patches its own status: %v", err)
	}

	admin, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	other := newKubelet(t, c, "worker-1")
	other.cs = admin // created by an administrator, not by worker-0
	if err := other.register(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("NodeRestriction", func(t *testing.T) { checkNodeRestriction(t, self) })

	n, err := admin.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, hijacked := n.Labels["x"]; hijacked || readyReason(n) != "KubeletReady" {
		t.Errorf("worker-1 changed by worker-0: labels %v, conditions %+v", n.Labels, n.Status.Conditions)
	}
}

func checkNodeCertificate(t *testing.T, c *Cluster) {
	raw, err := c.IssueNodeKubeconfig("worker-0", c.GuestServer())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		if cl.Server != c.GuestServer() {
			t.Errorf("node kubeconfig server %q, want %q", cl.Server, c.GuestServer())
		}
	}
	for _, ai := range cfg.AuthInfos {
		block, _ := pem.Decode(ai.ClientCertificateData)
		if block == nil {
			t.Fatal("node kubeconfig carries no client certificate")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != "system:node:worker-0" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:nodes" {
			t.Errorf("node certificate subject %v, want CN=system:node:worker-0, O=system:nodes", cert.Subject)
		}
	}
	if _, err := c.IssueNodeKubeconfig("", ""); err == nil {
		t.Error("IssueNodeKubeconfig accepted an empty node name")
	}
}

// checkNodeRestriction: worker-0 may not touch worker-1, make other nodes or
// leases, or give itself labels kubelets may not set.
func checkNodeRestriction(t *testing.T, self *kubelet) {
	ctx := context.Background()
	nodes, leases := self.cs.CoreV1().Nodes(), self.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	forbidden := map[string]func() error{
		"label another node": func() error {
			_, err := nodes.Patch(ctx, "worker-1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
			return err
		},
		"patch another node's status": func() error {
			_, err := nodes.Patch(ctx, "worker-1", types.StrategicMergePatchType,
				[]byte(`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Hijacked"}]}}`), metav1.PatchOptions{}, "status")
			return err
		},
		"delete another node": func() error { return nodes.Delete(ctx, "worker-1", metav1.DeleteOptions{}) },
		"create another node": func() error {
			_, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-2"}}, metav1.CreateOptions{})
			return err
		},
		"renew another node's lease": func() error {
			l, err := leases.Get(ctx, "worker-1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			l.Spec.HolderIdentity = ptr.To("worker-0")
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			return err
		},
		"create another node's lease": func() error {
			_, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "worker-2"}}, metav1.CreateOptions{})
			return err
		},
		// Upstream NodeRestriction keeps node-role labels from kubelets:
		// a node agent cannot self-assign its role; an administrator
		// (the lab) labels it.
		"give itself a node-role label": func() error {
			_, err := nodes.Patch(ctx, self.name, types.StrategicMergePatchType,
				[]byte(`{"metadata":{"labels":{"node-role.kubernetes.io/worker":""}}}`), metav1.PatchOptions{})
			return err
		},
		// Kubernetes 1.34 authorizes node reads by selector: a node
		// reads only its own Node.
		"read another node": func() error {
			_, err := nodes.Get(ctx, "worker-1", metav1.GetOptions{})
			return err
		},
		"read a secret": func() error {
			_, err := self.cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		},
	}
	for what, do := range forbidden {
		err := do()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want Forbidden", what, err)
		}
	}
}

func readyReason(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Reason
		}
	}
	return ""
}
