package mapi

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/workload"
)

// A controller added through hostAndNodeWatches is asked to reconcile the
// Machine that consumes a host when the host changes, and the Machine a
// Node names when the Node changes; other hosts and nodes ask for nothing.
func TestMachineControllersWatchHostsAndNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seen := &requests{}
	runManager(ctx, t, func(mgr manager.Manager, _ manager.Options) error {
		_, err := controller.New("watch-test", hostAndNodeWatches{Manager: mgr, client: mgr.GetClient()}, controller.Options{Reconciler: seen})
		return err
	})
	ns := workload.MachineAPINamespace
	newHost(t, "watch-free", nil, nil)
	newHost(t, "watch-claimed", nil, func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: machineKind, APIVersion: machineAPIVersion, Name: "watch-m", Namespace: ns}
	})
	newNode(t, "watch-node", nil)
	n := newNode(t, "watch-linked-node", nil)
	patch := client.MergeFrom(n.DeepCopy())
	n.Annotations = map[string]string{NodeMachineAnnotation: ns + "/watch-linked-m"}
	if err := suite.client.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "requests for both Machines", func() bool { return seen.has(ns+"/watch-m") && seen.has(ns+"/watch-linked-m") })
	// Other tests' hosts may still be in the cluster; of this test's
	// objects only the two named Machines are asked for.
	for _, key := range seen.all() {
		if strings.HasPrefix(key, ns+"/watch-") && key != ns+"/watch-m" && key != ns+"/watch-linked-m" {
			t.Errorf("request for %s; want only the two Machines", key)
		}
	}
}

// requests records the requests a controller was asked to reconcile.
type requests struct {
	mu  sync.Mutex
	got map[string]bool
}

func (r *requests) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string]bool{}
	}
	r.got[req.String()] = true
	return reconcile.Result{}, nil
}

func (r *requests) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[key]
}

func (r *requests) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.got {
		out = append(out, k)
	}
	return out
}
