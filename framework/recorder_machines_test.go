package framework

import (
	"context"
	"strconv"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/results"
)

// The recorder keeps what the link, replica and provisioning aspects are
// built from: a Machine's providerID and nodeRef, a MachineSet's replica
// counts each time they change, and each image a BareMetalHost is given
// with a digest of its user data, never the user data itself. Nodes
// watched for identity only keep a record per UID.
func TestRecorderKeepsLinksReplicasProvisioningAndNodeIdentity(t *testing.T) {
	h, c := startHub(t)
	ctx := context.Background()
	must(t, crds.Install(h.RESTConfig(), crds.InstallInput{Sets: []crds.Set{crds.Metal3(), crds.MachineAPI()}}))
	ns, err := CreateNamespace(ctx, c, "rec")
	must(t, err)
	rec, err := StartRecorder(ctx, RecorderInput{RESTConfig: h.RESTConfig(), Watches: []Watch{
		{Resource: gvr("machine.openshift.io", "v1beta1", "machines"), Namespace: ns.Name, Role: "machine"},
		{Resource: gvr("machine.openshift.io", "v1beta1", "machinesets"), Namespace: ns.Name, Role: "machine-set"},
		{Resource: gvr("metal3.io", "v1alpha1", "baremetalhosts"), Namespace: ns.Name, Role: "host", Interchangeable: true},
		{Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Role: "node", IdentityOnly: true},
	}})
	must(t, err)
	defer rec.Stop()

	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: ns.Name},
		Spec: machinev1beta1.MachineSpec{ProviderID: ptr.To("baremetalhost:///ns/host-0/uid")}}
	must(t, c.Create(ctx, m))
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "node-0"}
	must(t, c.Status().Update(ctx, m))

	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms-0", Namespace: ns.Name},
		Spec: machinev1beta1.MachineSetSpec{Replicas: ptr.To[int32](0)}}
	must(t, c.Create(ctx, ms))
	for _, r := range []int32{2, 2, 2} {
		must(t, c.Get(ctx, client.ObjectKeyFromObject(ms), ms))
		ms.Spec.Replicas = ptr.To(r)
		must(t, c.Update(ctx, ms))
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(ms), ms))
	ms.Status.Replicas, ms.Status.ReadyReplicas, ms.Status.AvailableReplicas = 2, 2, 2
	must(t, c.Status().Update(ctx, ms))

	must(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ud", Namespace: ns.Name},
		StringData: map[string]string{"userData": "secret-token-do-not-record"}}))
	bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "host-0", Namespace: ns.Name},
		Spec: bmov1alpha1.BareMetalHostSpec{Online: true, Image: &bmov1alpha1.Image{URL: "http://127.0.0.1:1/a.iso", DiskFormat: ptr.To("live-iso")},
			UserData: &corev1.SecretReference{Name: "ud"}}}
	must(t, c.Create(ctx, bmh))
	waitFor(t, "the first image", func() bool { return len(objectNamed(rec, "host-0").Provisioning) == 1 })
	bmh.Spec.Image = &bmov1alpha1.Image{URL: "http://127.0.0.1:1/b.raw", Checksum: "abc", DiskFormat: ptr.To("raw")}
	bmh.Spec.UserData = nil
	must(t, c.Update(ctx, bmh))

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", Labels: map[string]string{"a": "b"}}}
	must(t, c.Create(ctx, node))
	must(t, c.Delete(ctx, node))
	must(t, c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}))

	waitFor(t, "every change to be seen", func() bool {
		return objectNamed(rec, "m-0").NodeRef == "node-0" && len(objectNamed(rec, "host-0").Provisioning) == 2 &&
			lastReplicas(objectNamed(rec, "ms-0")) == "2/2/2" && len(nodes(rec)) == 2
	})
	if got := objectNamed(rec, "m-0").ProviderID; got != "baremetalhost:///ns/host-0/uid" {
		t.Errorf("providerID %q", got)
	}
	if got := objectNamed(rec, "ms-0").Replicas; len(got) != 3 || got[0].Desired != 0 || got[1].Desired != 2 || got[1].Ready != 0 {
		t.Errorf("replica samples %+v: want 0/0/0, 2/0/0 (updates that change nothing add none), 2/2/2", got)
	}
	host := objectNamed(rec, "host-0")
	p := host.Provisioning
	if !host.Interchangeable || p[0].Format != "live-iso" || !strings.HasPrefix(p[0].Image, "url-sha256:") ||
		!strings.HasPrefix(p[0].UserData, "sha256:") || p[1].Image != "abc" || p[1].Format != "raw" || p[1].UserData != "" {
		t.Errorf("provisioning %+v", host)
	}
	if strings.Contains(p[0].UserData, "secret-token") {
		t.Error("the user data leaked into the record")
	}
	for _, n := range nodes(rec) {
		if n.Labels != nil || n.Role != "node" {
			t.Errorf("identity-only node record %+v has more than identity", n)
		}
	}
	if ns := nodes(rec); ns[0].UID == ns[1].UID || ns[0].DeletedAt == nil || ns[1].DeletedAt != nil {
		t.Errorf("node records %+v: want the deleted one and its replacement", ns)
	}
}

func objectNamed(rec *Recorder, name string) results.Object {
	for _, o := range rec.Objects() {
		if o.Name == name && o.Kind != "Node" {
			return o
		}
	}
	return results.Object{}
}

func nodes(rec *Recorder) []results.Object {
	var out []results.Object
	for _, o := range rec.Objects() {
		if o.Kind == "Node" {
			out = append(out, o)
		}
	}
	return out
}

func lastReplicas(o results.Object) string {
	if len(o.Replicas) == 0 {
		return ""
	}
	r := o.Replicas[len(o.Replicas)-1]
	return strings.Join([]string{strconv.Itoa(r.Desired), strconv.Itoa(r.Ready), strconv.Itoa(r.Available)}, "/")
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// An image a host was given before the recorder started is not a
// provisioning of the flow under record; one given afterwards is.
func TestRecorderSkipsImagesGivenBeforeItStarted(t *testing.T) {
	h, c := startHub(t)
	ctx := context.Background()
	must(t, crds.Install(h.RESTConfig(), crds.InstallInput{Sets: []crds.Set{crds.Metal3()}}))
	ns, err := CreateNamespace(ctx, c, "pre")
	must(t, err)
	bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "pre-0", Namespace: ns.Name},
		Spec: bmov1alpha1.BareMetalHostSpec{Image: &bmov1alpha1.Image{URL: "http://127.0.0.1:1/day1.raw", Checksum: "day1"}}}
	must(t, c.Create(ctx, bmh))
	rec, err := StartRecorder(ctx, RecorderInput{RESTConfig: h.RESTConfig(), Watches: []Watch{
		{Resource: gvr("metal3.io", "v1alpha1", "baremetalhosts"), Namespace: ns.Name, Role: "host"}}})
	must(t, err)
	defer rec.Stop()
	bmh.Spec.Online = true // an update that changes no image
	must(t, c.Update(ctx, bmh))
	bmh.Spec.Image = &bmov1alpha1.Image{URL: "http://127.0.0.1:1/day2.raw", Checksum: "day2"}
	must(t, c.Update(ctx, bmh))
	waitFor(t, "the new image", func() bool { return len(objectNamed(rec, "pre-0").Provisioning) > 0 })
	if p := objectNamed(rec, "pre-0").Provisioning; len(p) != 1 || p[0].Image != "day2" {
		t.Fatalf("provisioning %+v: want only the image given after the recorder started", p)
	}
}
