package capm3

import (
	"context"
	"fmt"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// env is one test's namespace with a Cluster whose infrastructure is
// provisioned, as the CAPI Cluster controller leaves it.
type env struct {
	t       *testing.T
	ns      string
	cluster *clusterv1.Cluster
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "capm3-"}}
	e := &env{t: t}
	e.create(ns)
	e.ns = ns.Name
	e.cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "lab", Namespace: e.ns},
		Spec: clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.lab.example", Port: 6443}}}
	e.create(e.cluster)
	e.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	if err := suite.client.Status().Update(context.Background(), e.cluster); err != nil {
		t.Fatalf("set Cluster provisioned: %v", err)
	}
	return e
}

func (e *env) create(obj client.Object) {
	e.t.Helper()
	if err := suite.client.Create(context.Background(), obj); err != nil {
		e.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// hostOpt shapes a host's spec and status.
type hostOpt func(*bmov1alpha1.BareMetalHost)

// host creates a BareMetalHost and, as the bare-metal operator would,
// gives it a status: available unless an option says otherwise.
func (e *env) host(name string, opts ...hostOpt) *bmov1alpha1.BareMetalHost {
	e.t.Helper()
	h := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:            bmov1alpha1.BMCDetails{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/" + name, CredentialsName: name + "-bmc"},
			BootMACAddress: "52:54:00:00:00:01",
		},
		Status: bmov1alpha1.BareMetalHostStatus{
			Provisioning:      bmov1alpha1.ProvisionStatus{State: bmov1alpha1.StateAvailable},
			OperationalStatus: bmov1alpha1.OperationalStatusOK,
		},
	}
	for _, o := range opts {
		o(h)
	}
	status := h.Status
	e.create(h)
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { *s = status })
	return h
}

// setHostStatus changes a host's status as the bare-metal operator does.
func (e *env) setHostStatus(h *bmov1alpha1.BareMetalHost, change func(*bmov1alpha1.BareMetalHostStatus)) {
	e.t.Helper()
	err := retryUpdate(h, func() { change(&h.Status) }, true)
	if err != nil {
		e.t.Fatalf("set status of BareMetalHost %s: %v", h.Name, err)
	}
}

func retryUpdate(obj client.Object, change func(), status bool) error {
	ctx := context.Background()
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		change()
		var err error
		if status {
			err = suite.client.Status().Update(ctx, obj)
		} else {
			err = suite.client.Update(ctx, obj)
		}
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// machine creates what CAPI core makes of a MachineSet's template: a
// Machine with bootstrap data, and its Metal3Machine, owned by it.
func (e *env) machine(name string, spec capm3v1beta1.Metal3MachineSpec, opts ...func(*clusterv1.Machine)) (*clusterv1.Machine, *capm3v1beta1.Metal3Machine) {
	e.t.Helper()
	data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: e.ns},
		Data: map[string][]byte{"value": []byte(`{"ignition":{"version":"3.1.0"}}` + name), "format": []byte("ignition")}}
	e.create(data)
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "lab"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "lab",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(data.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capm3v1beta1.GroupVersion.Group, Kind: "Metal3Machine", Name: name,
			},
		},
	}
	for _, o := range opts {
		o(m)
	}
	e.create(m)
	m3m := &capm3v1beta1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "lab"},
			OwnerReferences: []metav1.OwnerReference{machineOwnerRef(m)}},
		Spec: spec,
	}
	e.create(m3m)
	return m, m3m
}

func machineOwnerRef(m *clusterv1.Machine) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// diskImage is a disk image as a Metal3MachineTemplate names it.
func diskImage() capm3v1beta1.Image {
	return capm3v1beta1.Image{URL: "http://127.0.0.1:8080/discovery.raw", Checksum: "0123abcd",
		ChecksumType: ptr.To("sha256"), DiskFormat: ptr.To("raw")}
}

// eventually polls cond until it returns nil or 30s pass.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

// get reads obj fresh.
func get(obj client.Object) error {
	return suite.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
}

// associatedHost waits for the Metal3Machine's annotation and returns the
// host it names.
func (e *env) associatedHost(m3m *capm3v1beta1.Metal3Machine) *bmov1alpha1.BareMetalHost {
	e.t.Helper()
	h := &bmov1alpha1.BareMetalHost{}
	eventually(e.t, "Metal3Machine "+m3m.Name+" is annotated with its host", func() error {
		if err := get(m3m); err != nil {
			return err
		}
		v := m3m.Annotations[hostAnnotation]
		if v == "" {
			return fmt.Errorf("no %s annotation; conditions %+v", hostAnnotation, m3m.Status.Conditions)
		}
		ns, name, _ := cutKey(v)
		h.Namespace, h.Name = ns, name
		return get(h)
	})
	return h
}

func sleep() { time.Sleep(100 * time.Millisecond) }
