package metal3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// liveISO points a host at a live ISO and powers it on, as the ZTP
// binding does.
func liveISO(url string) func(*bmov1alpha1.BareMetalHost) {
	return func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: url, DiskFormat: ptr.To("live-iso")}
		h.Spec.Online = true
		h.Spec.AutomatedCleaningMode = bmov1alpha1.CleaningModeDisabled
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		h.Annotations[bmov1alpha1.InspectAnnotationPrefix] = bmov1alpha1.InspectAnnotationValueDisabled
	}
}

// A live ISO is inserted, booted once from Cd and the host powered on.
func TestLiveISOProvisioning(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	iso := redfishtest.ServeImage(t, "discovery.iso", redfishtest.ImageContent)
	key := b.createHost("node-0", liveISO(iso))
	h := waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))

	if img, inserted, _ := b.backend.Attached(b.systemID("node-0"), redfish.DeviceCd); !inserted || img.URL != iso {
		t.Fatalf("Cd holds %+v (inserted %v), want %s", img, inserted, iso)
	}
	sys := b.system("node-0")
	if sys.PowerState != redfish.PowerOn || sys.Boot.Target != redfish.BootTargetCd || sys.Boot.Enabled != redfish.BootDisabled {
		t.Fatalf("system power %s boot %+v: want On, the Cd override spent by its one boot", sys.PowerState, sys.Boot)
	}
	if boots := b.boots("node-0"); !slices.Equal(boots, []string{redfish.BootTargetCd}) {
		t.Fatalf("boots %v, want one boot from Cd", boots)
	}
	p := h.Status.Provisioning
	if p.Image.URL != iso || !p.Image.IsLiveISO() || p.BootMode != bmov1alpha1.UEFI || !h.Status.PoweredOn {
		t.Fatalf("status provisioning %+v poweredOn %v: want the live ISO, UEFI, powered on", p, h.Status.PoweredOn)
	}
	if h.Status.OperationHistory.Provision.End.IsZero() {
		t.Errorf("operation history %+v: want provision start and end", h.Status.OperationHistory.Provision)
	}
	// The Once override holds for one boot: a reboot goes to the disk.
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Annotations[bmov1alpha1.RebootAnnotationPrefix] = "" })
	waitFor(t, "the reboot", func() bool { return len(b.boots("node-0")) == 2 && b.system("node-0").PowerState == redfish.PowerOn })
	if boots := b.boots("node-0"); boots[1] != redfish.BootTargetHdd {
		t.Fatalf("boots %v: the reboot after the live ISO must go to the disk", boots)
	}
}

// A disk image is written by the Deployer while the host is off; the user
// data reaches the BMC as a config-2 ISO; the host boots its disk.
func TestDiskImageWithUserData(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	content := []byte("a raw disk image")
	sum := sha256.Sum256(content)
	imageURL := redfishtest.ServeImage(t, "node.raw", content)
	userData := `{"ignition":{"version":"3.2.0"}}`
	createUserData(t, b.ns, "node-0-user-data", userData)
	powerAtWrite := make(chan string, 1)
	suite.deployer.setHook(b.systemID("node-0"), func(Host) error {
		select {
		case powerAtWrite <- b.system("node-0").PowerState:
		default:
		}
		return nil
	})
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: imageURL, Checksum: hex.EncodeToString(sum[:]), ChecksumType: bmov1alpha1.SHA256, DiskFormat: ptr.To("raw")}
		h.Spec.UserData = &corev1.SecretReference{Name: "node-0-user-data"}
		h.Spec.Online = true
	})
	h := waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))

	writes := suite.deployer.written(b.systemID("node-0"))
	want := Image{URL: imageURL, Format: "raw", Checksum: hex.EncodeToString(sum[:]), ChecksumType: "sha256"}
	if len(writes) != 1 || writes[0] != want {
		t.Fatalf("deployer got %+v, want one write of %+v", writes, want)
	}
	if p := <-powerAtWrite; p != redfish.PowerOff {
		t.Fatalf("the image was written while the host was %s", p)
	}
	sys := b.system("node-0")
	if sys.PowerState != redfish.PowerOn || sys.Boot.Target != redfish.BootTargetHdd || sys.Boot.Enabled != redfish.BootContinuous {
		t.Fatalf("system power %s boot %+v: want On, boot Hdd Continuous", sys.PowerState, sys.Boot)
	}
	cd := sys.Media[redfish.DeviceCd]
	if !cd.Inserted || !strings.Contains(cd.Image, configDrivePath) {
		t.Fatalf("Cd %+v: want the config drive inserted", cd)
	}
	iso := download(t, cd.Image)
	checkConfigDrive(t, iso, userData, h)
}

func createUserData(t *testing.T, ns, name, data string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{"userData": []byte(data)}}
	if err := suite.client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

func download(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // the controller's loopback server
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return raw
}

// checkConfigDrive reads the ISO's volume label and files with xorriso.
func checkConfigDrive(t *testing.T, iso []byte, userData string, h *bmov1alpha1.BareMetalHost) {
	t.Helper()
	if len(iso) < 0x8048 || strings.TrimSpace(string(iso[0x8028:0x8048])) != "config-2" {
		t.Fatal("the config drive's volume label is not config-2")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cd.iso")
	if err := os.WriteFile(path, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xorriso", "-osirrox", "on", "-indev", path, "-extract", "/openstack", filepath.Join(dir, "openstack")).CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "openstack", "latest", "user_data"))
	if err != nil || string(got) != userData {
		t.Fatalf("user_data %q (%v), want %q", got, err, userData)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "openstack", "latest", "meta_data.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	if meta["name"] != h.Name || meta["metal3-namespace"] != h.Namespace || meta["uuid"] != string(h.UID) {
		t.Fatalf("meta_data %v: want the host's name, namespace and UID", meta)
	}
}

// A failed provisioning is a provisioning error; the host goes through
// deprovisioning and tries again, and gets there once the fault is gone.
func TestProvisioningErrorIsRetried(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	content := []byte("image")
	sum := sha256.Sum256(content)
	imageURL := redfishtest.ServeImage(t, "node.raw", content)
	broken := make(chan struct{})
	suite.deployer.setHook(b.systemID("node-0"), func(Host) error {
		select {
		case <-broken:
			return nil
		default:
			return errors.New("injected disk failure")
		}
	})
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: imageURL, Checksum: hex.EncodeToString(sum[:])}
		h.Spec.Online = true
	})
	h := waitHost(t, key, "a provisioning error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.ProvisioningError
	})
	if !strings.Contains(h.Status.ErrorMessage, "injected disk failure") || h.Status.OperationalStatus != bmov1alpha1.OperationalStatusError {
		t.Fatalf("status %+v: want the Deployer's error", h.Status)
	}
	close(broken)
	waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
	if w := suite.deployer.wiped(b.systemID("node-0")); w == 0 {
		t.Fatal("the failed provisioning was not cleaned up (no metadata cleaning)")
	}
}

// A disk image without a checksum is refused, as BMO refuses it.
func TestDiskImageNeedsChecksum(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: "http://127.0.0.1:1/node.qcow2"}
		h.Spec.Online = true
	})
	h := waitHost(t, key, "a provisioning error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.ProvisioningError
	})
	if !strings.Contains(h.Status.ErrorMessage, "checksum is required") {
		t.Fatalf("error %q: want it to ask for a checksum", h.Status.ErrorMessage)
	}
}

// Clearing the image deprovisions: power off, eject, metadata cleaning
// (unless disabled), available again.
func TestDeprovisioning(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "disk", "live")
	content := []byte("image")
	sum := sha256.Sum256(content)
	imageURL := redfishtest.ServeImage(t, "node.raw", content)
	disk := b.createHost("disk", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: imageURL, Checksum: hex.EncodeToString(sum[:])}
		h.Spec.Online = true
	})
	live := b.createHost("live", liveISO(redfishtest.ServeImage(t, "live.iso", redfishtest.ImageContent)))
	for _, key := range []client.ObjectKey{disk, live} {
		waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
		update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Spec.Image, h.Spec.Online = nil, false })
	}
	for _, key := range []client.ObjectKey{disk, live} {
		h := waitHost(t, key, "available again", inState(bmov1alpha1.StateAvailable))
		sys := b.system(key.Name)
		if sys.PowerState != redfish.PowerOff || sys.Media[redfish.DeviceCd].Inserted {
			t.Errorf("%s: power %s, Cd %+v: want off and empty", key.Name, sys.PowerState, sys.Media[redfish.DeviceCd])
		}
		if h.Status.Provisioning.Image.URL != "" || h.Status.PoweredOn || h.Status.OperationHistory.Deprovision.End.IsZero() {
			t.Errorf("%s: status %+v: want no image, powered off, deprovision recorded", key.Name, h.Status)
		}
	}
	if w := suite.deployer.wiped(b.systemID("disk")); w != 1 {
		t.Errorf("disk host wiped %d times, want once (automatedCleaningMode metadata)", w)
	}
	if w := suite.deployer.wiped(b.systemID("live")); w != 0 {
		t.Errorf("live host wiped %d times, want never (automatedCleaningMode disabled)", w)
	}
}

// Deleting a provisioned host deprovisions and powers it off before the
// finalizer goes; a host that never registered goes at once.
func TestDeleteWithFinalizer(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0", "node-1")
	content := []byte("image")
	sum := sha256.Sum256(content)
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.Image = &bmov1alpha1.Image{URL: redfishtest.ServeImage(t, "n.raw", content), Checksum: hex.EncodeToString(sum[:])}
		h.Spec.Online = true
	})
	h := waitHost(t, key, "provisioned", inState(bmov1alpha1.StateProvisioned))
	if err := suite.client.Delete(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
	if sys := b.system("node-0"); sys.PowerState != redfish.PowerOff || sys.Media[redfish.DeviceCd].Inserted {
		t.Fatalf("after delete: power %s, Cd %+v; want off and empty", sys.PowerState, sys.Media[redfish.DeviceCd])
	}
	if w := suite.deployer.wiped(b.systemID("node-0")); w != 1 {
		t.Fatalf("wiped %d times, want once", w)
	}

	b.createSecret("node-1-bmc", bmcUser, "wrong")
	stuck := b.createHostOnly("node-1", nil)
	h = waitHost(t, stuck, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if err := suite.client.Delete(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitGone(t, stuck)
}

func serveISO(t *testing.T) string {
	return redfishtest.ServeImage(t, "live.iso", redfishtest.ImageContent)
}
