package conformance

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Intervals bound the waits of a spec.
type Intervals struct {
	// Timeout bounds every wait for the provider. Default 2m.
	Timeout time.Duration
	// Poll is the polling interval. Default 250ms.
	Poll time.Duration
	// PauseWindow is how long a paused object is watched for progress it
	// must not make. Default 3s.
	PauseWindow time.Duration
}

func (i Intervals) withDefaults() Intervals {
	if i.Timeout == 0 {
		i.Timeout = 2 * time.Minute
	}
	if i.Poll == 0 {
		i.Poll = 250 * time.Millisecond
	}
	if i.PauseWindow == 0 {
		i.PauseWindow = 3 * time.Second
	}
	return i
}

// eventually waits for check to pass; on timeout the failure shows the
// check's last error, which names the contract rule.
func eventually(ctx context.Context, in Intervals, check func() error, what string) {
	GinkgoHelper()
	Eventually(ctx, check).WithTimeout(in.Timeout).WithPolling(in.Poll).Should(Succeed(), what)
}

// consistently checks check passes for the pause window.
func consistently(ctx context.Context, in Intervals, check func() error, what string) {
	GinkgoHelper()
	Consistently(ctx, check).WithTimeout(in.PauseWindow).WithPolling(in.Poll).Should(Succeed(), what)
}

// createVisible creates obj and waits until c reads it back. The
// manager's client reads through its cache, which learns of a new object a
// moment after the create; a check that must hold from the start
// (consistently) would otherwise fail on that lag, not on the provider.
func createVisible(ctx context.Context, c client.Client, in Intervals, obj *unstructured.Unstructured) {
	GinkgoHelper()
	Expect(c.Create(ctx, obj)).To(Succeed())
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(obj.GroupVersionKind())
	eventually(ctx, in, func() error { return c.Get(ctx, client.ObjectKeyFromObject(obj), probe) }, describe(obj)+" readable after its create")
}

// createNamespace creates a namespace for one spec.
func createNamespace(ctx context.Context, c client.Client, prefix string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	Expect(c.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// createCluster creates a Cluster with provisioned infrastructure, as the
// Cluster controller leaves it for the providers; controlPlane and
// infrastructure are its references (zero: none).
func createCluster(ctx context.Context, c client.Client, namespace, name string, controlPlane, infrastructure clusterv1.ContractVersionedObjectReference) *clusterv1.Cluster {
	GinkgoHelper()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api." + name + ".example.com", Port: 6443},
			ControlPlaneRef:      controlPlane,
			InfrastructureRef:    infrastructure,
		},
	}
	Expect(c.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	Expect(c.Status().Update(ctx, cluster)).To(Succeed())
	return cluster
}

// get reads u again.
func get(ctx context.Context, c client.Reader, u *unstructured.Unstructured) error {
	return c.Get(ctx, client.ObjectKeyFromObject(u), u)
}

// setAnnotation sets or (value nil) removes an annotation, retrying on
// conflicts.
func setAnnotation(ctx context.Context, c client.Client, obj client.Object, key string, value *string) {
	GinkgoHelper()
	change(ctx, c, obj, func() {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		if value == nil {
			delete(a, key)
		} else {
			a[key] = *value
		}
		obj.SetAnnotations(a)
	})
}

// change reads obj, applies mutate and updates it, retrying on conflicts.
func change(ctx context.Context, c client.Client, obj client.Object, mutate func()) {
	GinkgoHelper()
	Eventually(ctx, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return c.Update(ctx, obj)
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

func ownerRef(obj client.Object, gvk schema.GroupVersionKind, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(true),
	}
}
