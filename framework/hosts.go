package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab"
)

// HostPool hands the lab's hosts to scenario flows. A claimed host leaves
// the lab's namespace and becomes a BareMetalHost where the flow wants it,
// written as that flow's user writes it; it is not handed out again, so
// every flow runs on hosts no other flow touched.
type HostPool struct {
	lab *Lab

	mu      sync.Mutex
	next    int
	claimed []ClaimedHostRecord
}

// ClaimedHostRecord is a claimed host and the cluster its BareMetalHost
// was written to.
type ClaimedHostRecord struct {
	lab.InventoryHost
	// Cluster holds the BareMetalHost: the hub or a workload cluster.
	Cluster client.Client
}

// NewHostPool returns a pool over the lab's inventory.
func NewHostPool(l *Lab) *HostPool { return &HostPool{lab: l} }

// HostClaim is how a flow wants a host.
type HostClaim struct {
	// Namespace and Name of the new BareMetalHost (and <Name>-bmc, its
	// BMC Secret).
	Namespace, Name string
	Labels          map[string]string
	Annotations     map[string]string
	// Online is spec.online; hosts for a provisioner (and ZTP hosts, which
	// the BMAC turns online) are written offline.
	Online bool
	// Cluster is where the BareMetalHost is written; default the hub. A
	// workload cluster's machine API manages hosts in its own cluster.
	Cluster client.Client
}

// ClaimedHost is a host a flow owns.
type ClaimedHost struct {
	lab.InventoryHost
	BareMetalHost *bmov1alpha1.BareMetalHost
}

// Free is how many hosts are left.
func (p *HostPool) Free() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lab.Inventory.Hosts) - p.next
}

// Claim moves the next free hosts out of the lab's namespace into the
// flows' BareMetalHosts, one per claim.
func (p *HostPool) Claim(ctx context.Context, claims ...HostClaim) ([]ClaimedHost, error) {
	p.mu.Lock()
	if p.next+len(claims) > len(p.lab.Inventory.Hosts) {
		free := len(p.lab.Inventory.Hosts) - p.next
		p.mu.Unlock()
		return nil, fmt.Errorf("claim %d hosts: the lab has %d free of %d; bring it up with more hosts", len(claims), free, len(p.lab.Inventory.Hosts))
	}
	hosts := p.lab.Inventory.Hosts[p.next : p.next+len(claims)]
	p.next += len(claims)
	p.mu.Unlock()
	out := make([]ClaimedHost, 0, len(claims))
	for i, claim := range claims {
		p.record(hosts[i], claim)
		bmh, err := p.move(ctx, hosts[i], claim)
		if err != nil {
			return out, err
		}
		out = append(out, ClaimedHost{InventoryHost: hosts[i], BareMetalHost: bmh})
	}
	return out, nil
}

// record remembers where a claim writes its host, before it does: a claim
// that fails half-way may still have left a BareMetalHost there.
func (p *HostPool) record(h lab.InventoryHost, claim HostClaim) {
	target := p.lab.Client()
	if claim.Cluster != nil {
		target = claim.Cluster
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claimed = append(p.claimed, ClaimedHostRecord{InventoryHost: h, Cluster: target})
}

// Claimed lists the hosts claimed so far, in claim order.
func (p *HostPool) Claimed() []ClaimedHostRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ClaimedHostRecord(nil), p.claimed...)
}

func (p *HostPool) move(ctx context.Context, h lab.InventoryHost, claim HostClaim) (*bmov1alpha1.BareMetalHost, error) {
	c := p.lab.Client()
	ns := p.lab.Inventory.Namespace
	old := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.Name}, old); err != nil {
		return nil, fmt.Errorf("get the lab's BareMetalHost %s: %w", h.Name, err)
	}
	creds := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Spec.BMC.CredentialsName}, creds); err != nil {
		return nil, fmt.Errorf("get BMC secret of %s: %w", h.Name, err)
	}
	if err := c.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("release the lab's BareMetalHost %s: %w", h.Name, err)
	}
	// The bare-metal operator removes its finalizer once the host is
	// forgotten; a new host for the same BMC must wait for that.
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(old), &bmov1alpha1.BareMetalHost{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for the lab's BareMetalHost %s to go: %w", h.Name, err)
	}
	target := c
	if claim.Cluster != nil {
		target = claim.Cluster
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: claim.Name + "-bmc", Namespace: claim.Namespace}, Data: creds.Data}
	if err := target.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("create BMC secret of %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	bmh := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: claim.Name, Namespace: claim.Namespace, Labels: claim.Labels, Annotations: claim.Annotations},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:                   bmov1alpha1.BMCDetails{Address: old.Spec.BMC.Address, CredentialsName: secret.Name},
			BootMACAddress:        old.Spec.BootMACAddress,
			BootMode:              old.Spec.BootMode,
			Online:                claim.Online,
			AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled,
		},
	}
	if err := target.Create(ctx, bmh); err != nil {
		return nil, fmt.Errorf("create BareMetalHost %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return bmh, nil
}
