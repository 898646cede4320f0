package metal3

import (
	"context"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/paritylab/paritylab/lab/redfish"
)

// A BMC answering 503 to everything about the system is a registration
// error that says so; the host recovers when the BMC does.
func TestBMCServerErrorsSurfaceAndRecover(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", nil)
	waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	ctx := context.Background()
	if err := b.server.SetFault(ctx, b.systemID("node-0"), redfish.Fault{Status: 503}); err != nil {
		t.Fatal(err)
	}
	h := waitHost(t, key, "an error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.OperationalStatus == bmov1alpha1.OperationalStatusError
	})
	if h.Status.ErrorType != bmov1alpha1.RegistrationError || !strings.Contains(h.Status.ErrorMessage, "503") || h.Status.ErrorCount == 0 {
		t.Fatalf("status %+v: want a registration error naming HTTP 503", h.Status)
	}
	if err := b.server.ClearFault(ctx, b.systemID("node-0")); err != nil {
		t.Fatal(err)
	}
	h = waitHost(t, key, "recovered", inState(bmov1alpha1.StateAvailable))
	if h.Status.ErrorMessage != "" || h.Status.ErrorType != "" {
		t.Fatalf("status %+v: want the error cleared", h.Status)
	}
}

// A BMC that acknowledges power requests and forgets them (ignorePower)
// is a power management error; the power comes once it behaves.
func TestIgnoredPowerRequestsSurfaceAndRecover(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", nil)
	waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	ctx := context.Background()
	if err := b.server.SetFault(ctx, b.systemID("node-0"), redfish.Fault{IgnorePower: true}); err != nil {
		t.Fatal(err)
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Spec.Online = true })
	h := waitHost(t, key, "a power management error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.PowerManagementError
	})
	if h.Status.OperationalStatus != bmov1alpha1.OperationalStatusError || !strings.Contains(h.Status.ErrorMessage, "still Off") ||
		b.power("node-0") != redfish.PowerOff {
		t.Fatalf("status %+v, power %s: want an error saying the system stayed Off", h.Status, b.power("node-0"))
	}
	if err := b.server.ClearFault(ctx, b.systemID("node-0")); err != nil {
		t.Fatal(err)
	}
	waitHost(t, key, "powered on", poweredOn(true))
	if b.power("node-0") != redfish.PowerOn {
		t.Fatalf("power %s, want On", b.power("node-0"))
	}
}

// A fault during provisioning is a provisioning error, and provisioning
// completes once the BMC recovers.
func TestFaultDuringProvisioningRecovers(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}
	})
	waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	ctx := context.Background()
	// The Reset requests of the next provisioning are ignored.
	if err := b.server.SetFault(ctx, b.systemID("node-0"), redfish.Fault{IgnorePower: true}); err != nil {
		t.Fatal(err)
	}
	update(t, key, liveISO(serveISO(t)))
	h := waitHost(t, key, "a provisioning error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.ProvisioningError
	})
	if !strings.Contains(h.Status.ErrorMessage, "still Off") {
		t.Fatalf("error %q: want it to say the system stayed Off", h.Status.ErrorMessage)
	}
	if err := b.server.ClearFault(ctx, b.systemID("node-0")); err != nil {
		t.Fatal(err)
	}
	waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
	if b.power("node-0") != redfish.PowerOn {
		t.Fatalf("power %s, want On", b.power("node-0"))
	}
}
