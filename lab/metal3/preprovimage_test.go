package metal3

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/redfish"
)

// manualImageLabel marks a host whose PreprovisioningImage the test
// answers itself; the suite's image provider answers all others.
const manualImageLabel = "test.paritylab.io/manual-preprovisioning-image"

// leaveManual leaves the images of hosts labelled manualImageLabel to
// the test.
func leaveManual(ppi *bmov1alpha1.PreprovisioningImage) bool {
	_, manual := ppi.Labels[manualImageLabel]
	return manual
}

// fakeSteps is a deploy ramdisk's custom deploy steps: a step is done
// once the test says how it ended.
type fakeSteps struct {
	mu    sync.Mutex
	ended map[string]error // by system ID; nil error: finished
	asked map[string][]string
}

var _ CustomDeployer = (*fakeSteps)(nil)

func newFakeSteps() *fakeSteps {
	return &fakeSteps{ended: map[string]error{}, asked: map[string][]string{}}
}

func (f *fakeSteps) DeployStepDone(_ context.Context, host Host, method string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[host.SystemID] = append(f.asked[host.SystemID], method)
	err, ended := f.ended[host.SystemID]
	return ended && err == nil, err
}

func (f *fakeSteps) end(systemID string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended[systemID] = err
}

func (f *fakeSteps) methods(systemID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Compact(append([]string(nil), f.asked[systemID]...))
}

func manualImage(h *bmov1alpha1.BareMetalHost) {
	h.Labels = map[string]string{manualImageLabel: "", "site": "lab"}
}

func getImage(t *testing.T, key client.ObjectKey) *bmov1alpha1.PreprovisioningImage {
	t.Helper()
	var ppi *bmov1alpha1.PreprovisioningImage
	waitFor(t, "the PreprovisioningImage "+key.Name, func() bool {
		ppi = &bmov1alpha1.PreprovisioningImage{}
		return suite.client.Get(context.Background(), key, ppi) == nil
	})
	return ppi
}

// An inspecting host gets a PreprovisioningImage named and labelled like
// itself and owned by it, and waits in inspecting until the image is
// ready; then it is inspected and made available.
func TestHostWaitsForItsPreprovisioningImage(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", manualImage)
	ppi := getImage(t, key)
	h := waitHost(t, key, "inspecting", inState(bmov1alpha1.StateInspecting))

	if ppi.Labels["site"] != "lab" || len(ppi.OwnerReferences) != 1 {
		t.Fatalf("image labels %v owners %v: want the host's labels and the host as owner", ppi.Labels, ppi.OwnerReferences)
	}
	if o := ppi.OwnerReferences[0]; o.Kind != "BareMetalHost" || o.UID != h.UID || o.Controller == nil || !*o.Controller {
		t.Fatalf("owner %+v: want the host, as controller", o)
	}
	want := []bmov1alpha1.ImageFormat{bmov1alpha1.ImageFormatISO, bmov1alpha1.ImageFormatInitRD}
	if ppi.Spec.Architecture != "x86_64" || !slices.Equal(ppi.Spec.AcceptFormats, want) {
		t.Fatalf("image spec %+v: want x86_64 and %v for a virtual-media BMC", ppi.Spec, want)
	}
	time.Sleep(time.Second)
	if h := waitHost(t, key, "inspecting", inState(bmov1alpha1.StateInspecting)); h.Status.HardwareDetails != nil {
		t.Fatalf("host inspected (%+v) before its PreprovisioningImage was ready", h.Status.HardwareDetails)
	}

	ppi = getImage(t, key)
	setImageReady(ppi, "http://127.0.0.1:1/ramdisk.iso")
	if err := suite.client.Status().Update(context.Background(), ppi); err != nil {
		t.Fatal(err)
	}
	h = waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	if h.Status.HardwareDetails == nil {
		t.Fatal("available host has no hardware details")
	}
}

// A PreprovisioningImage that cannot be built is a registration error of
// its host, with the image's message.
func TestPreprovisioningImageErrorIsRegistrationError(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", manualImage)
	ppi := getImage(t, key)
	ppi.Status.Architecture, ppi.Status.Format = ppi.Spec.Architecture, bmov1alpha1.ImageFormatISO
	setImageConditions(ppi, metav1.ConditionFalse, metav1.ConditionTrue, "ImageBuildInvalid", "no ramdisk for this architecture")
	if err := suite.client.Status().Update(context.Background(), ppi); err != nil {
		t.Fatal(err)
	}
	h := waitHost(t, key, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if h.Status.ErrorMessage != "no ramdisk for this architecture" || h.Status.Provisioning.State != bmov1alpha1.StateInspecting {
		t.Fatalf("error %q in state %s: want the image's message, still inspecting", h.Status.ErrorMessage, h.Status.Provisioning.State)
	}
}

func customDeploy(method string) func(*bmov1alpha1.BareMetalHost) {
	return func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.CustomDeploy = &bmov1alpha1.CustomDeploy{Method: method}
		h.Spec.Online = true
	}
}

// A custom deploy boots the PreprovisioningImage's ISO once and runs the
// named step in it; the host stays provisioning until the step finished,
// then is provisioned with the method and no image. Removing the custom
// deploy deprovisions it.
func TestCustomDeploy(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", customDeploy("start_assisted_install"))
	id := b.systemID("node-0")
	waitFor(t, "the deploy ramdisk booted", func() bool {
		return slices.Equal(b.boots("node-0"), []string{redfish.BootTargetCd}) && slices.Contains(suite.steps.methods(id), "start_assisted_install")
	})
	if img, inserted, _ := b.backend.Attached(id, redfish.DeviceCd); !inserted || img.URL != suite.ramdisk {
		t.Fatalf("Cd holds %+v (inserted %v), want the PreprovisioningImage's ISO %s", img, inserted, suite.ramdisk)
	}
	time.Sleep(time.Second)
	if h := waitHost(t, key, "provisioning", inState(bmov1alpha1.StateProvisioning)); len(b.boots("node-0")) != 1 {
		t.Fatalf("boots %v in %s while the step runs: want one boot of the ramdisk", b.boots("node-0"), h.Status.Provisioning.State)
	}

	suite.steps.end(id, nil)
	h := waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
	p := h.Status.Provisioning
	if p.CustomDeploy == nil || p.CustomDeploy.Method != "start_assisted_install" || p.Image.URL != "" || !h.Status.PoweredOn {
		t.Fatalf("status provisioning %+v poweredOn %v: want the method, no image, powered on", p, h.Status.PoweredOn)
	}
	// Ironic ends the deploy: ramdisk off, media ejected, disk booted.
	if boots := b.boots("node-0"); !slices.Equal(boots, []string{redfish.BootTargetCd, redfish.BootTargetHdd}) {
		t.Fatalf("boots %v: want the ramdisk, then the disk", boots)
	}
	if _, inserted, _ := b.backend.Attached(id, redfish.DeviceCd); inserted {
		t.Fatal("the deploy ramdisk stays inserted after the deploy")
	}

	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Spec.CustomDeploy = nil })
	h = waitHost(t, key, "available again", inState(bmov1alpha1.StateAvailable))
	if h.Status.Provisioning.CustomDeploy != nil {
		t.Fatalf("deprovisioned host keeps custom deploy %+v", h.Status.Provisioning.CustomDeploy)
	}
}

// A failing step is a provisioning error; the host is deprovisioned.
func TestCustomDeployStepFails(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	id := b.systemID("node-0")
	suite.steps.end(id, errors.New("agent.service failed"))
	key := b.createHost("node-0", customDeploy("start_assisted_install"))
	h := waitHost(t, key, "a provisioning error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.ProvisioningError
	})
	if h.Status.ErrorMessage != "agent.service failed" {
		t.Fatalf("error message %q, want the step's", h.Status.ErrorMessage)
	}
	waitHost(t, key, "deprovisioning or after", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.OperationHistory.Deprovision.Start.After(h.Status.OperationHistory.Provision.Start.Time) ||
			h.Status.Provisioning.State == bmov1alpha1.StateDeprovisioning
	})
}

// A custom deploy is cancelled, as in BMO, when its method changes or it
// is removed; an image not yet provisioned cancels nothing.
func TestProvisioningCancelled(t *testing.T) {
	t.Parallel()
	h := &bmov1alpha1.BareMetalHost{}
	h.Spec.CustomDeploy = &bmov1alpha1.CustomDeploy{Method: "b"}
	h.Status.Provisioning.CustomDeploy = &bmov1alpha1.CustomDeploy{Method: "a"}
	if !provisioningCancelled(h) {
		t.Error("a changed method must cancel the provisioning")
	}
	h.Spec.CustomDeploy.Method = "a"
	if provisioningCancelled(h) {
		t.Error("the same method must not cancel the provisioning")
	}
	h.Spec.CustomDeploy = nil
	if !provisioningCancelled(h) {
		t.Error("a removed custom deploy must cancel the provisioning")
	}
	h.Status.Provisioning.CustomDeploy = nil
	h.Spec.Image = &bmov1alpha1.Image{URL: "http://x/y"}
	if provisioningCancelled(h) {
		t.Error("an image not yet provisioned must not cancel")
	}
}
