package metal3

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/redfish"
)

// A host with a reachable BMC and good credentials registers, is inspected
// over Redfish and becomes available, powered off as it was.
func TestRegistersInspectsAndBecomesAvailable(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", nil)
	h := waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))

	secret := &corev1.Secret{}
	if err := suite.client.Get(context.Background(), client.ObjectKey{Namespace: b.ns, Name: "node-0-bmc"}, secret); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]bmov1alpha1.CredentialsStatus{"good": h.Status.GoodCredentials, "tried": h.Status.TriedCredentials} {
		if c.Reference == nil || c.Reference.Name != secret.Name || c.Reference.Namespace != b.ns || c.Version != secret.ResourceVersion {
			t.Errorf("%s credentials %+v, want Secret %s at version %s", name, c, secret.Name, secret.ResourceVersion)
		}
	}
	if !controllerHasFinalizer(h) {
		t.Errorf("finalizers %v, want %s", h.Finalizers, bmov1alpha1.BareMetalHostFinalizer)
	}
	st := h.Status
	if st.ErrorType != "" || st.ErrorMessage != "" || st.ErrorCount != 0 || st.PoweredOn {
		t.Errorf("status %+v: want no error, powered off", st)
	}
	if st.Provisioning.ID != b.systemID("node-0") || st.Provisioning.BootMode != bmov1alpha1.UEFI {
		t.Errorf("provisioning %+v: want ID %s, boot mode UEFI", st.Provisioning, b.systemID("node-0"))
	}
	for name, m := range map[string]bmov1alpha1.OperationMetric{"register": st.OperationHistory.Register, "inspect": st.OperationHistory.Inspect} {
		if m.Start.IsZero() || m.End.IsZero() {
			t.Errorf("operation history %s %+v: want start and end", name, m)
		}
	}
	checkHardware(t, b, h.Status.HardwareDetails)
}

func controllerHasFinalizer(h *bmov1alpha1.BareMetalHost) bool {
	for _, f := range h.Finalizers {
		if f == bmov1alpha1.BareMetalHostFinalizer {
			return true
		}
	}
	return false
}

func checkHardware(t *testing.T, b *bmc, hw *bmov1alpha1.HardwareDetails) {
	t.Helper()
	if hw == nil {
		t.Fatal("no status.hardware after inspection")
	}
	if hw.CPU.Count != 4 || hw.RAMMebibytes != 8192 {
		t.Errorf("hardware CPU %+v RAM %d MiB, want 4 CPUs and 8192 MiB", hw.CPU, hw.RAMMebibytes)
	}
	if hw.SystemVendor.Manufacturer != "paritylab" || hw.SystemVendor.ProductName != "Emulated system" {
		t.Errorf("system vendor %+v, want the emulator's", hw.SystemVendor)
	}
	// The emulator's Processors and Storage: what the in-guest agent
	// reports of the same host (x86_64, one 120 GiB disk).
	if hw.CPU.Arch != "x86_64" {
		t.Errorf("CPU arch %q, want x86_64 from the BMC's Processors", hw.CPU.Arch)
	}
	if len(hw.Storage) != 1 {
		t.Fatalf("storage %+v, want one disk from the BMC's Storage", hw.Storage)
	}
	if d := hw.Storage[0]; d.Name != "vda" || d.SizeBytes != 120*bmov1alpha1.GibiByte || d.Type != bmov1alpha1.HDD || !d.Rotational {
		t.Errorf("disk %+v, want vda, 120 GiB, rotational HDD", d)
	}
	sys := b.system("node-0")
	if len(hw.NIC) != len(sys.NICs) {
		t.Fatalf("NICs %+v, want %d", hw.NIC, len(sys.NICs))
	}
	for i, n := range hw.NIC {
		if n.MAC != sys.NICs[i].MAC || n.PXE != (i == 0) {
			t.Errorf("NIC %d %+v, want MAC %s, PXE only on the boot MAC", i, n, sys.NICs[i].MAC)
		}
	}
}

// inspect.metal3.io: disabled skips inspection, as ZTP asks.
func TestInspectionDisabledSkipsInspection(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}
	})
	h := waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	if h.Status.HardwareDetails != nil || !h.Status.OperationHistory.Inspect.Start.IsZero() {
		t.Fatalf("inspection ran although disabled: hardware %+v, history %+v", h.Status.HardwareDetails, h.Status.OperationHistory.Inspect)
	}
}

// Wrong credentials are a registration error that says so, retried; fixing
// the Secret recovers the host.
func TestBadCredentialsThenFixedSecret(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	secret := b.createSecret("node-0-bmc", bmcUser, "wrong-password")
	key := b.createHostOnly("node-0", nil)
	h := waitHost(t, key, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError && h.Status.ErrorCount >= 2
	})
	st := h.Status
	if st.OperationalStatus != bmov1alpha1.OperationalStatusError || st.Provisioning.State != bmov1alpha1.StateRegistering ||
		!strings.Contains(st.ErrorMessage, "rejected the credentials") || !strings.Contains(st.ErrorMessage, "401") {
		t.Fatalf("status %+v: want operationalStatus error in registering, saying the credentials were rejected (401)", st)
	}
	if st.TriedCredentials.Version != secret.ResourceVersion || st.GoodCredentials.Reference != nil {
		t.Fatalf("tried %+v good %+v: want tried = Secret version %s, no good credentials", st.TriedCredentials, st.GoodCredentials, secret.ResourceVersion)
	}

	secret.Data["password"] = []byte(bmcPass)
	if err := suite.client.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	h = waitHost(t, key, "available with the fixed Secret", inState(bmov1alpha1.StateAvailable))
	if h.Status.GoodCredentials.Version != secret.ResourceVersion || h.Status.ErrorMessage != "" || h.Status.ErrorCount != 0 {
		t.Fatalf("status %+v: want good credentials at version %s and no error", h.Status, secret.ResourceVersion)
	}
}

// A BMC nobody answers for is a registration error saying it cannot be
// reached.
func TestUnreachableBMC(t *testing.T) {
	t.Parallel()
	b := newBMC(t)
	port, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.BMC.Address = "redfish-virtualmedia+http://127.0.0.1:" + strconv.Itoa(port) + "/redfish/v1/Systems/x"
	})
	h := waitHost(t, key, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if !strings.Contains(h.Status.ErrorMessage, "cannot reach the BMC") || h.Status.OperationalStatus != bmov1alpha1.OperationalStatusError {
		t.Fatalf("status %+v: want an error saying the BMC cannot be reached", h.Status)
	}
}

// What the user wrote wrong in spec.bmc or its Secret is a registration
// error naming the problem.
func TestBMCDetailErrors(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0", "node-1", "node-2", "node-3")
	cases := []struct {
		host   string
		secret bool
		mutate func(*bmov1alpha1.BareMetalHost)
		want   string
	}{
		{host: "node-0", want: "does not exist"},
		{host: "node-1", secret: true, want: "unknown BMC type \"ipmi\"", mutate: func(h *bmov1alpha1.BareMetalHost) {
			h.Spec.BMC.Address = "ipmi://127.0.0.1:623"
		}},
		{host: "node-2", secret: true, want: "is not a Redfish system", mutate: func(h *bmov1alpha1.BareMetalHost) {
			h.Spec.BMC.Address = "redfish+http://127.0.0.1:1/redfish/v1/Managers/1"
		}},
	}
	for _, c := range cases {
		if c.secret {
			b.createSecret(c.host+"-bmc", bmcUser, bmcPass)
		}
		key := b.createHostOnly(c.host, c.mutate)
		h := waitHost(t, key, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
			return h.Status.ErrorType == bmov1alpha1.RegistrationError
		})
		if !strings.Contains(h.Status.ErrorMessage, c.want) {
			t.Errorf("%s: error %q, want it to say %q", c.host, h.Status.ErrorMessage, c.want)
		}
	}
	// The missing Secret appears: the host recovers by itself.
	b.createSecret("node-0-bmc", bmcUser, bmcPass)
	waitHost(t, client.ObjectKey{Namespace: b.ns, Name: "node-0"}, "available", inState(bmov1alpha1.StateAvailable))
	// A Secret without a password.
	b.createSecret("node-3-bmc", bmcUser, "")
	h := waitHost(t, b.createHostOnly("node-3", nil), "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if !strings.Contains(h.Status.ErrorMessage, "'password'") {
		t.Errorf("error %q, want it to name the missing password", h.Status.ErrorMessage)
	}
}

// A host without BMC details is unmanaged and discovered.
func TestNoBMCDetailsIsUnmanaged(t *testing.T) {
	t.Parallel()
	b := newBMC(t)
	key := b.createHostOnly("bare", func(h *bmov1alpha1.BareMetalHost) { h.Spec.BMC = bmov1alpha1.BMCDetails{} })
	waitHost(t, key, "unmanaged", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == bmov1alpha1.StateUnmanaged &&
			h.Status.OperationalStatus == bmov1alpha1.OperationalStatusDiscovered
	})
}

// inspect.metal3.io/hardwaredetails sets status.hardware when inspection
// is disabled, and goes; inspect.metal3.io (any value but disabled) on an
// available host inspects it again.
func TestHardwareDetailsAnnotationAndReinspection(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{
			bmov1alpha1.InspectAnnotationPrefix:   bmov1alpha1.InspectAnnotationValueDisabled,
			bmov1alpha1.HardwareDetailsAnnotation: `{"cpu":{"arch":"x86_64","count":32},"ramMebibytes":131072,"hostname":"from-agent"}`,
		}
	})
	h := waitHost(t, key, "available with the annotated hardware", func(h *bmov1alpha1.BareMetalHost) bool {
		_, still := h.Annotations[bmov1alpha1.HardwareDetailsAnnotation]
		return inState(bmov1alpha1.StateAvailable)(h) && !still
	})
	if hw := h.Status.HardwareDetails; hw == nil || hw.CPU.Count != 32 || hw.RAMMebibytes != 131072 || hw.Hostname != "from-agent" {
		t.Fatalf("hardware %+v: want the annotation's", hw)
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) { h.Annotations[bmov1alpha1.InspectAnnotationPrefix] = "" })
	h = waitHost(t, key, "inspected again", func(h *bmov1alpha1.BareMetalHost) bool {
		_, requested := h.Annotations[bmov1alpha1.InspectAnnotationPrefix]
		return inState(bmov1alpha1.StateAvailable)(h) && !requested && h.Status.HardwareDetails != nil && h.Status.HardwareDetails.CPU.Count == 4
	})
	checkHardware(t, b, h.Status.HardwareDetails)
}

// An Operator sets up in one manager only (the lab makes one per cluster).
func TestOperatorSetsUpOnce(t *testing.T) {
	t.Parallel()
	op, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	s := runtime.NewScheme()
	if err := op.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(suite.cfg, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.SetupWithManager(context.Background(), mgr); err != nil {
		t.Fatal(err)
	}
	if err := op.SetupWithManager(context.Background(), mgr); err == nil || !strings.Contains(err.Error(), "one manager") {
		t.Fatalf("second SetupWithManager: %v, want a refusal", err)
	}
	if !strings.HasPrefix(op.ConfigDriveURL(), "http://127.0.0.1:") {
		t.Fatalf("config drive URL %s, want loopback", op.ConfigDriveURL())
	}
}

// A BMC on HTTPS with a certificate nobody trusts is refused unless the
// host says spec.bmc.disableCertificateVerification.
func TestHTTPSBMCCertificateVerification(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test-bmc-ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.ServingCert("bmc", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := kp.WriteFiles(cert, key); err != nil {
		t.Fatal(err)
	}
	b := startBMC(t, redfish.Options{TLSCertFile: cert, TLSKeyFile: key}, "node-0", "node-1")
	if !strings.HasPrefix(b.address("node-0"), "redfish-virtualmedia+https://") {
		t.Fatalf("address %s, want https", b.address("node-0"))
	}
	insecure := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) { h.Spec.BMC.DisableCertificateVerification = true })
	verified := b.createHost("node-1", nil)
	waitHost(t, insecure, "available", inState(bmov1alpha1.StateAvailable))
	h := waitHost(t, verified, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if !strings.Contains(h.Status.ErrorMessage, "certificate") {
		t.Fatalf("error %q: want it to be about the certificate", h.Status.ErrorMessage)
	}
}

// An address without a system path means the BMC's only system; a BMC
// with more is an error asking for one.
func TestAddressWithoutSystemPath(t *testing.T) {
	t.Parallel()
	one := newBMC(t, "node-0")
	key := one.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.BMC.Address = "redfish-virtualmedia+" + one.server.URL()
	})
	h := waitHost(t, key, "available", inState(bmov1alpha1.StateAvailable))
	if h.Status.Provisioning.ID != one.systemID("node-0") {
		t.Fatalf("ID %s, want the only system %s", h.Status.Provisioning.ID, one.systemID("node-0"))
	}
	two := newBMC(t, "node-0", "node-1")
	key = two.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.BMC.Address = "redfish+" + two.server.URL() + "/"
	})
	h = waitHost(t, key, "a registration error", func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.ErrorType == bmov1alpha1.RegistrationError
	})
	if !strings.Contains(h.Status.ErrorMessage, "serves 2 systems") {
		t.Fatalf("error %q: want it to ask for a system", h.Status.ErrorMessage)
	}
}

// baremetalhost.metal3.io/status gives a host without a status its first
// one, as assisted-service writes installed hosts (an externally
// provisioned host is not inspected, so the cached hardware stays), and
// goes; on a host that has a status, the annotation only goes.
func TestStatusAnnotationRestoresAndGoes(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	cached := `{"hardware":{"cpu":{"arch":"x86_64","count":32},"ramMebibytes":131072,"hostname":"cached"},"poweredOn":true}`
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ExternallyProvisioned = true
		h.Annotations = map[string]string{bmov1alpha1.StatusAnnotation: cached}
	})
	h := waitHost(t, key, "externally provisioned with the cached hardware, the annotation gone", func(h *bmov1alpha1.BareMetalHost) bool {
		_, still := h.Annotations[bmov1alpha1.StatusAnnotation]
		return inState(bmov1alpha1.StateExternallyProvisioned)(h) && !still
	})
	if hw := h.Status.HardwareDetails; hw == nil || hw.CPU.Count != 32 || hw.RAMMebibytes != 131072 || hw.Hostname != "cached" {
		t.Fatalf("hardware %+v: want the cached status's", hw)
	}
	update(t, key, func(h *bmov1alpha1.BareMetalHost) {
		h.Annotations = map[string]string{bmov1alpha1.StatusAnnotation: `{"hardware":{"hostname":"stale"}}`}
	})
	h = waitHost(t, key, "the stale cache gone", func(h *bmov1alpha1.BareMetalHost) bool {
		_, still := h.Annotations[bmov1alpha1.StatusAnnotation]
		return !still
	})
	if hw := h.Status.HardwareDetails; hw == nil || hw.Hostname != "cached" || h.Status.Provisioning.State != bmov1alpha1.StateExternallyProvisioned {
		t.Fatalf("state %s hardware %+v: want the status kept", h.Status.Provisioning.State, hw)
	}
}

// A status cache that does not parse loses nothing: the host registers as
// if it had none, a warning event says what is wrong, and the annotation
// goes once the host has a status of its own.
func TestStatusAnnotationThatDoesNotParse(t *testing.T) {
	t.Parallel()
	b := newBMC(t, "node-0")
	key := b.createHost("node-0", func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ExternallyProvisioned = true
		h.Annotations = map[string]string{bmov1alpha1.StatusAnnotation: `{"hardware":`}
	})
	waitHost(t, key, "externally provisioned, the broken cache gone", func(h *bmov1alpha1.BareMetalHost) bool {
		_, still := h.Annotations[bmov1alpha1.StatusAnnotation]
		return inState(bmov1alpha1.StateExternallyProvisioned)(h) && !still
	})
	// Events are written asynchronously by the recorder's broadcaster.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		events := &corev1.EventList{}
		if err := suite.client.List(context.Background(), events, client.InNamespace(key.Namespace)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == key.Name && e.Type == corev1.EventTypeWarning && e.Reason == "InvalidAnnotationValue" &&
				strings.Contains(e.Message, bmov1alpha1.StatusAnnotation) {
				return
			}
		}
	}
	t.Fatalf("no warning event naming %s on host %s", bmov1alpha1.StatusAnnotation, key.Name)
}
