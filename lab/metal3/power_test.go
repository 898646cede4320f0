package metal3

import (
	"context"
	"slices"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

func poweredOn(on bool) func(*bmov1alpha1.BareMetalHost) bool {
	return func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.PoweredOn == on && h.Status.OperationalStatus == bmov1alpha1.OperationalStatusOK
	}
}

func (b *bmc) power(host string) string { return b.system(host).PowerState }

// spec.online drives the power of an available host; status.poweredOn
// follows the BMC.
func TestOnlineDrivesPower(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", nil)
	waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Spec.Online = true })
	waitHost(t, key, "powered on", poweredOn(true))
	if b.power("node-0") != redfish.PowerOn || !slices.Equal(b.boots("node-0"), []string{redfish.BootTargetHdd}) {
		t.Fatalf("power %s boots %v: want On after one boot from disk", b.power("node-0"), b.boots("node-0"))
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Spec.Online = false })
	waitHost(t, key, "powered off", poweredOn(false))
	if b.power("node-0") != redfish.PowerOff {
		t.Fatalf("power %s, want Off", b.power("node-0"))
	}
	// Out of band: someone powers the host on at the BMC; the status
	// shows it, and online: false turns it off again.
	if err := b.backend.Reset(context.Background(), b.systemID("node-0"), redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to power the host off again", func() bool {
		return b.power("node-0") == redfish.PowerOff && len(b.boots("node-0")) == 2
	})
}

// provisionLive brings a host to provisioned with a live ISO.
func provisionLive(t *testing.T, b *bmc, host string) client.ObjectKey {
	t.Helper()
	key := b.createHost(host, liveISO(redfishtest.ServeImage(t, host+".iso", redfishtest.ImageContent)))
	waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
	return key
}

// reboot.metal3.io reboots once and is removed.
func TestRebootAnnotationRebootsOnce(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := provisionLive(t, b, "node-0")
	before := len(b.boots("node-0"))
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Annotations[bmov1alpha1.RebootAnnotationPrefix] = "" })
	h := waitHost(t, key, "the annotation removed and the host on", func(h *bmov1alpha1.BareMetalHost) bool {
		_, still := h.Annotations[bmov1alpha1.RebootAnnotationPrefix]
		return !still && h.Status.PoweredOn
	})
	if b.power("node-0") != redfish.PowerOn || len(b.boots("node-0")) != before+1 {
		t.Fatalf("power %s, boots %v (had %d): want exactly one more boot", b.power("node-0"), b.boots("node-0"), before)
	}
	if h.Status.Provisioning.State != bmov1alpha1.StateProvisioned {
		t.Fatalf("state %s after a reboot, want provisioned", h.Status.Provisioning.State)
	}
}

// reboot.metal3.io/<key>, as remediation sets it, keeps the host off while
// present, even against an out-of-band power on; removing it restores
// the power per spec.online.
func TestSuffixedRebootKeepsPowerOff(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := provisionLive(t, b, "node-0")
	const remediation = bmov1alpha1.RebootAnnotationPrefix + "/capm3-remediation-node-0"
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Annotations[remediation] = `{"mode":"hard"}` })
	waitHost(t, key, "powered off", poweredOn(false))
	if b.power("node-0") != redfish.PowerOff {
		t.Fatalf("power %s, want Off", b.power("node-0"))
	}
	if err := b.backend.Reset(context.Background(), b.systemID("node-0"), redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	boots := len(b.boots("node-0"))
	waitFor(t, "the host to be kept off", func() bool { return b.power("node-0") == redfish.PowerOff })
	h := waitHost(t, key, "still annotated and off", poweredOn(false))
	if _, ok := h.Annotations[remediation]; !ok {
		t.Fatal("the controller removed a suffixed reboot annotation; only its owner may")
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { delete(h.Annotations, remediation) })
	waitHost(t, key, "powered on again", poweredOn(true))
	if b.power("node-0") != redfish.PowerOn || len(b.boots("node-0")) != boots+1 {
		t.Fatalf("power %s boots %v: want On after one more boot", b.power("node-0"), b.boots("node-0"))
	}
}

// A reboot annotation on a host that is not provisioned counts only with
// "force": true, as in BMO.
func TestRebootOfAvailableHostNeedsForce(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) { h.Spec.Online = true })
	waitHost(t, key, "available and on", func(h *bmov1alpha1.BareMetalHost) bool {
		return inState(bmov1alpha1.StateAvailable)(h) && h.Status.PoweredOn
	})
	const forced = bmov1alpha1.RebootAnnotationPrefix + "/test"
	update(t, key, func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{forced: `{"mode":"hard","force":true}`}
	})
	waitHost(t, key, "powered off by the forced annotation", poweredOn(false))
}

// The detached annotation stops all management: no power or media
// changes, whatever the spec says, until it is removed.
func TestDetachedStopsManagement(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0", "node-1")
	key := provisionLive(t, b, "node-0")
	resets, inserts, ejects := b.counts.resets.Load(), b.counts.inserts.Load(), b.counts.ejects.Load()
	// One change: the reconcile that records "detached" saw online: false
	// too, and must not have acted on it.
	update(t, key, func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations[bmov1alpha1.DetachedAnnotation] = "assisted-service-controller"
		h.Spec.Online = false
		h.Spec.Image = nil
	})
	h := waitHost(t, key, "detached", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.OperationalStatus == bmov1alpha1.OperationalStatusDetached
	})
	if h.Status.Provisioning.State != bmov1alpha1.StateProvisioned || b.power("node-0") != redfish.PowerOn {
		t.Fatalf("state %s power %s: a detached host keeps its state and power", h.Status.Provisioning.State, b.power("node-0"))
	}
	if b.counts.resets.Load() != resets || b.counts.inserts.Load() != inserts || b.counts.ejects.Load() != ejects {
		t.Fatal("the BMC of a detached host got power or media requests")
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) {
		delete(h.Annotations, bmov1alpha1.DetachedAnnotation)
		h.Spec.Image = h.Status.Provisioning.Image.DeepCopy()
	})
	waitHost(t, key, "managed again and powered off", func(h *bmov1alpha1.BareMetalHost) bool {
		return poweredOn(false)(h) && h.Status.Provisioning.State == bmov1alpha1.StateProvisioned
	})
	if b.power("node-0") != redfish.PowerOff {
		t.Fatalf("power %s, want Off once managed again", b.power("node-0"))
	}

	// Deleting a detached provisioned host does not touch it.
	other := provisionLive(t, b, "node-1")
	update(t, other, func(h *bmov1alpha1.BareMetalHost) { h.Annotations[bmov1alpha1.DetachedAnnotation] = "" })
	h = waitHost(t, other, "detached", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.OperationalStatus == bmov1alpha1.OperationalStatusDetached
	})
	if err := suite.client.Delete(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitGone(t, other)
	if b.power("node-1") != redfish.PowerOn || !b.system("node-1").Media[redfish.DeviceCd].Inserted {
		t.Fatal("deleting a detached host powered it off or ejected its media")
	}
}

// An externally provisioned host is only power-managed.
func TestExternallyProvisionedIsPowerManaged(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ExternallyProvisioned, h.Spec.Online = true, true
	})
	h := waitHost(t, key, "externally provisioned and on", func(h *bmov1alpha1.BareMetalHost) bool {
		return inState(bmov1alpha1.StateExternallyProvisioned)(h) && h.Status.PoweredOn
	})
	if h.Status.HardwareDetails != nil || b.power("node-0") != redfish.PowerOn || b.counts.inserts.Load() != 0 {
		t.Fatalf("hardware %+v, power %s, %d inserts: want no inspection, power on, no media", h.Status.HardwareDetails, b.power("node-0"), b.counts.inserts.Load())
	}
}
