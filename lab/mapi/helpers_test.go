package mapi

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	maomachine "github.com/openshift/machine-api-operator/pkg/controller/machine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/paritylab/paritylab/lab/workload"
)

// suite is one workload cluster (real etcd, kube-apiserver and
// kube-controller-manager with the machine API and BMH CRDs) that every
// test uses, each in its own objects.
var suite struct {
	cluster *workload.Cluster
	client  client.Client
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.New(ctrllog.NullLogSink{}))
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := workload.Start(ctx, workload.Options{Name: "mapi-test"})
	if err != nil {
		panic(err)
	}
	defer c.Stop()
	s, err := Scheme()
	if err != nil {
		panic(err)
	}
	suite.cluster = c
	if suite.client, err = client.New(c.RESTConfig(), client.Options{Scheme: s}); err != nil {
		panic(err)
	}
	return m.Run()
}

func testActuator() *Actuator {
	return NewActuator(suite.client, record.NewFakeRecorder(100), logr.Discard(), time.Second)
}

// newHost creates a BareMetalHost and writes its status as the bare-metal
// operator would.
func newHost(t *testing.T, name string, labels map[string]string, mutate func(*bmov1alpha1.BareMetalHost)) *bmov1alpha1.BareMetalHost {
	t.Helper()
	ctx := context.Background()
	h := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workload.MachineAPINamespace, Labels: labels},
		Spec:       bmov1alpha1.BareMetalHostSpec{BMC: bmov1alpha1.BMCDetails{Address: "redfish://127.0.0.1/" + name, CredentialsName: "none"}},
	}
	status := bmov1alpha1.BareMetalHostStatus{Provisioning: bmov1alpha1.ProvisionStatus{State: bmov1alpha1.StateAvailable}, OperationalStatus: bmov1alpha1.OperationalStatusOK}
	h.Status = status
	if mutate != nil {
		mutate(h)
	}
	status = h.Status
	if err := suite.client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	h.Status = status
	if err := suite.client.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.Get(ctx, client.ObjectKeyFromObject(h), h)
		h.Finalizers = nil
		_ = suite.client.Update(ctx, h)
		_ = suite.client.Delete(ctx, h)
	})
	return h
}

func setHostStatus(t *testing.T, h *bmov1alpha1.BareMetalHost, mutate func(*bmov1alpha1.BareMetalHostStatus)) {
	t.Helper()
	ctx := context.Background()
	if err := suite.client.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
		t.Fatal(err)
	}
	mutate(&h.Status)
	if err := suite.client.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
}

// newMachine creates a Machine with a bare-metal providerSpec.
func newMachine(t *testing.T, name string, sel HostSelector) *machinev1beta1.Machine {
	t.Helper()
	ps, err := RawProviderSpec(BareMetalMachineProviderSpec{
		Image:        Image{URL: "http://127.0.0.1/node.iso", Checksum: "abc"},
		UserData:     &corev1.SecretReference{Name: WorkerUserDataSecret},
		HostSelector: sel,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workload.MachineAPINamespace},
		Spec:       machinev1beta1.MachineSpec{ProviderSpec: *ps},
	}
	if err := suite.client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), m) })
	return m
}

func newNode(t *testing.T, name string, labels map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := suite.client.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), n) })
	return n
}

func isRequeue(err error) bool {
	var r *maomachine.RequeueAfterError
	return errors.As(err, &r)
}

func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}
