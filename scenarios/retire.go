package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
)

// retiredPause is the value of the paused annotation on the BareMetalHosts
// of retired hosts. CAPM3 lifts only the pause it set itself (its own
// value), so this one stays.
const retiredPause = "paritylab.io/retired"

// RetireClaimedHosts powers off, at their BMCs, the servers of every host
// claimed so far, and first pauses every BareMetalHost of those servers,
// on the hub and in the flows' workload clusters, so that no operator
// powers them on again. (A MAPI spoke's bare-metal operator manages its
// own copies of the cluster's hosts, with their BMCs: left unpaused, one
// powered a retired master on again at the machine controller's next
// resync.) The suite calls it once nothing still to run starts from those
// hosts' clusters: a TCG guest keeps about 0.8 GiB of host memory for as
// long as it runs, and a lab with every scenario's guests running needs
// more memory than a 24 GiB machine has. The clusters stay as they are
// (their API servers answer; their Nodes go NotReady), and `lab down`
// removes them with the rest. It returns the hosts it retired and how
// many BareMetalHosts it paused.
func RetireClaimedHosts(ctx context.Context, in Input) ([]framework.ClaimedHostRecord, int, error) {
	claimed := in.Hosts.Claimed()
	macs := map[string]bool{}
	for _, h := range claimed {
		macs[strings.ToLower(h.MAC)] = true
	}
	paused, err := pauseHostsOf(ctx, retireClusters(in, claimed), macs)
	if err != nil {
		return nil, paused, err
	}
	var errs []error
	var retired []framework.ClaimedHostRecord
	for _, h := range claimed {
		if err := powerOffAtBMC(ctx, in.Lab, h); err != nil {
			errs = append(errs, err)
			continue
		}
		retired = append(retired, h)
	}
	return retired, paused, errors.Join(errs...)
}

// retireClusters are the clusters that may hold BareMetalHosts of claimed
// hosts: the hub, where claims wrote them, and the flows' workload
// clusters (the spokes' copies).
func retireClusters(in Input, claimed []framework.ClaimedHostRecord) []client.Client {
	clusters := []client.Client{in.Lab.Client()}
	for _, h := range claimed {
		clusters = append(clusters, h.Cluster)
	}
	for _, flow := range []results.Flow{results.FlowMAPI, results.FlowCAPI} {
		if c := in.Clusters.Get(flow); c != nil && c.Workload != nil {
			clusters = append(clusters, c.Workload)
		}
	}
	return clusters
}

// pauseHostsOf pauses every BareMetalHost in the clusters whose boot MAC
// is one of macs (lower case), and returns how many it paused. The same
// cluster may come through several clients (claims hold their own, and a
// cached one may not show a pause yet): a host is known by its UID.
func pauseHostsOf(ctx context.Context, clusters []client.Client, macs map[string]bool) (int, error) {
	paused := map[types.UID]bool{}
	for _, c := range clusters {
		hosts := &bmov1alpha1.BareMetalHostList{}
		if err := c.List(ctx, hosts); err != nil {
			if meta.IsNoMatchError(err) {
				continue // a cluster without bare-metal hosts
			}
			return len(paused), fmt.Errorf("list BareMetalHosts: %w", err)
		}
		for i := range hosts.Items {
			bmh := &hosts.Items[i]
			if !macs[strings.ToLower(bmh.Spec.BootMACAddress)] || paused[bmh.UID] {
				continue
			}
			if err := pauseHost(ctx, c, bmh); err != nil {
				return len(paused), err
			}
			paused[bmh.UID] = true
		}
	}
	return len(paused), nil
}

// PoweredOnAgain lists the retired hosts whose servers are on again: an
// operator that did not honour the pause.
func PoweredOnAgain(ctx context.Context, l *framework.Lab, retired []framework.ClaimedHostRecord) ([]string, error) {
	var on []string
	for _, h := range retired {
		err := withBMCSystem(ctx, l, h.MAC, h.Name, func(sys *gfredfish.ComputerSystem) error {
			if sys.PowerState != gfredfish.OffPowerState {
				on = append(on, h.Name)
			}
			return nil
		})
		if err != nil {
			return on, err
		}
	}
	return on, nil
}

// pauseHost pauses one BareMetalHost.
func pauseHost(ctx context.Context, c client.Client, bmh *bmov1alpha1.BareMetalHost) error {
	patch := client.MergeFrom(bmh.DeepCopy())
	if bmh.Annotations == nil {
		bmh.Annotations = map[string]string{}
	}
	bmh.Annotations[bmov1alpha1.PausedAnnotation] = retiredPause
	if err := c.Patch(ctx, bmh, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("pause BareMetalHost %s/%s: %w", bmh.Namespace, bmh.Name, err)
	}
	return nil
}

// powerOffAtBMC forces a host's server off at its BMC, as an admin
// retiring a server does; a server already off is left alone.
func powerOffAtBMC(ctx context.Context, l *framework.Lab, h framework.ClaimedHostRecord) error {
	return withBMCSystem(ctx, l, h.MAC, h.Name, func(sys *gfredfish.ComputerSystem) error {
		if sys.PowerState == gfredfish.OffPowerState {
			return nil
		}
		if err := sys.Reset(gfredfish.ForceOffResetType); err != nil {
			return fmt.Errorf("power off host %s at its BMC: %w", h.Name, err)
		}
		return nil
	})
}
