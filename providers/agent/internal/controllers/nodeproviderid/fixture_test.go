package nodeproviderid_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/nodeproviderid"
)

const (
	timeout = 30 * time.Second
	// quiet is how long Consistently watches for what must not happen.
	quiet = 3 * time.Second
	// providerID is the AgentMachine's, as the AgentMachine controller
	// writes it: agent://<Agent name>.
	providerID = "agent://4c4c4544-0042-3510-8051-b4c04f4e4d32"
)

// fixture is one test's world: a control plane namespace whose
// admin-kubeconfig Secret reaches the test API server, where the Node
// nodeName lives.
type fixture struct {
	t  *testing.T
	g  *WithT
	ns string
	// nodeName is the Node's, and the AgentMachine's InternalDNS address;
	// unique, Nodes being cluster-scoped.
	nodeName string
}

func newFixture(t *testing.T) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	f := &fixture{t: t, g: NewWithT(t), ns: ns, nodeName: "worker-0." + ns + ".example.com"}
	kc, err := kubeconfig()
	f.g.Expect(err).NotTo(HaveOccurred())
	env.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "admin-kubeconfig", Namespace: ns},
		Data:       map[string][]byte{"kubeconfig": kc},
	})
	return f
}

// node creates the Node nodeName with the given provider ID.
func (f *fixture) node(id string) *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName}, Spec: corev1.NodeSpec{ProviderID: id}}
	env.Create(f.t, n)
	return n
}

// agentMachine creates the AgentMachine "m" with the provider ID and, as
// the AgentMachine controller reports them, the addresses (an ExternalIP
// and then the InternalDNS nodeName) and readiness; labelled for this
// test's controller.
func (f *fixture) agentMachine(ready bool) *capiagentv1.AgentMachine {
	f.t.Helper()
	am := &capiagentv1.AgentMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: f.ns}},
		Spec:       capiagentv1.AgentMachineSpec{ProviderID: ptr.To(providerID)},
	}
	env.Create(f.t, am)
	f.setStatus(func(s *capiagentv1.AgentMachineStatus) {
		s.Ready = ready
		s.Addresses = []clusterv1.MachineAddress{
			{Type: clusterv1.MachineExternalIP, Address: "192.0.2.10"},
			{Type: clusterv1.MachineInternalDNS, Address: f.nodeName},
		}
	})
	return am
}

func (f *fixture) setStatus(change func(*capiagentv1.AgentMachineStatus)) {
	f.t.Helper()
	am := &capiagentv1.AgentMachine{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "m"}, am, func() { change(&am.Status) }, true)).To(Succeed())
}

// startController adds a NodeProviderID controller, with the default
// RemoteClients, to the running manager, reconciling only this test's
// AgentMachines.
func (f *fixture) startController() {
	f.t.Helper()
	r := &nodeproviderid.Reconciler{Client: env.Manager.GetClient(), WatchFilterValue: f.ns}
	f.g.Expect(r.SetupWithManager(context.Background(), env.Manager, controller.Options{})).To(Succeed())
}

// reconcile runs one Reconcile of the AgentMachine "m", outside any
// controller, with the default RemoteClients.
func (f *fixture) reconcile() (ctrl.Result, error) { return f.reconcileWith(nil) }

// reconcileWith runs one Reconcile of the AgentMachine "m" with remote
// (nil: the default).
func (f *fixture) reconcileWith(remote nodeproviderid.RemoteClients) (ctrl.Result, error) {
	r := &nodeproviderid.Reconciler{Client: env.Client, RemoteClients: remote}
	return r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: "m"}})
}

// getNode returns the Node nodeName as stored.
func (f *fixture) getNode() *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: f.nodeName}, n)).To(Succeed())
	return n
}

func (f *fixture) nodeProviderID() string { return f.getNode().Spec.ProviderID }

// countingClients wraps RemoteClients, counting the clients it gives and
// the writes made through them.
type countingClients struct {
	nodeproviderid.RemoteClients
	clients int
	writes  atomic.Int32
}

func (c *countingClients) Client(ctx context.Context, namespace string) (client.Client, error) {
	inner, err := c.RemoteClients.Client(ctx, namespace)
	if err != nil {
		return nil, err
	}
	c.clients++
	return &countingClient{Client: inner, writes: &c.writes}, nil
}

type countingClient struct {
	client.Client
	writes *atomic.Int32
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.writes.Add(1)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	c.writes.Add(1)
	return c.Client.Patch(ctx, obj, p, opts...)
}
