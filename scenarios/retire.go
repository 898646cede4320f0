package scenarios

import (
	"context"
	"errors"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
)

// retiredPause is the value of the paused annotation on the BareMetalHosts
// of retired hosts. CAPM3 lifts only the pause it set itself (its own
// value), so this one stays.
const retiredPause = "paritylab.io/retired"

// RetireClaimedHosts powers off, at their BMCs, the servers of every host
// claimed so far, and pauses their BareMetalHosts first, so that no
// operator powers them on again. The suite calls it once nothing still to
// run starts from those hosts' clusters: a TCG guest keeps about 0.8 GiB
// of host memory for as long as it runs, and a lab with every scenario's
// guests running needs more memory than a 24 GiB machine has. The
// clusters stay as they are (their API servers answer; their Nodes go
// NotReady), and `lab down` removes them with the rest. It returns the
// hosts it retired.
func RetireClaimedHosts(ctx context.Context, in Input) ([]framework.ClaimedHostRecord, error) {
	var errs []error
	var retired []framework.ClaimedHostRecord
	for _, h := range in.Hosts.Claimed() {
		if err := pauseHost(ctx, h); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := powerOffAtBMC(ctx, in.Lab, h); err != nil {
			errs = append(errs, err)
			continue
		}
		retired = append(retired, h)
	}
	return retired, errors.Join(errs...)
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

// pauseHost pauses a claimed host's BareMetalHost where the claim wrote
// it; a host since deleted has no operator to stop.
func pauseHost(ctx context.Context, h framework.ClaimedHostRecord) error {
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := h.Cluster.Get(ctx, h.Key, bmh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get BareMetalHost %s of host %s: %w", h.Key, h.Name, err)
	}
	if bmh.Annotations[bmov1alpha1.PausedAnnotation] == retiredPause {
		return nil
	}
	patch := client.MergeFrom(bmh.DeepCopy())
	if bmh.Annotations == nil {
		bmh.Annotations = map[string]string{}
	}
	bmh.Annotations[bmov1alpha1.PausedAnnotation] = retiredPause
	if err := h.Cluster.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("pause BareMetalHost %s of host %s: %w", h.Key, h.Name, err)
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
