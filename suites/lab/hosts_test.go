package labsuite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/images"
)

// The hosts are shared and ZTP consumes them, so these specs run in order:
// first the hosts as the lab hands them out, then a ZTP install on them.
var _ = Describe("Virtual bare-metal hosts", Label("lab", "hosts"), Ordered, func() {
	It("has a BareMetalHost and a BMC Secret per host, addressed as metal3 expects", func(ctx SpecContext) {
		inv := shared.lab.Inventory()
		Expect(inv).NotTo(BeNil())
		Expect(inv.Hosts).To(HaveLen(suiteHosts))
		for _, h := range inv.Hosts {
			bmh := &bmov1alpha1.BareMetalHost{}
			Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: h.Name}, bmh)).To(Succeed())
			Expect(bmh.Spec.BMC.Address).To(MatchRegexp(`^redfish-virtualmedia\+http://127\.0\.0\.1:\d+/redfish/v1/Systems/` + h.UUID + `$`))
			Expect(bmh.Spec.BootMACAddress).To(Equal(h.MAC))
			Expect(bmh.Spec.BootMode).To(Equal(bmov1alpha1.Legacy))
			Expect(bmh.Labels).To(HaveKeyWithValue(lab.LabelRun, shared.lab.RunID()))

			sys, _ := redfishSystem(ctx, bmh)
			Expect(sys.PowerState).To(Equal(gfredfish.OffPowerState), "a new host is powered off")
			nics, err := sys.EthernetInterfaces()
			Expect(err).NotTo(HaveOccurred())
			Expect(nics).To(ContainElement(HaveField("MACAddress", h.MAC)), "the BMC reports the BMH's boot MAC")
		}
	}, SpecTimeout(time.Minute))

	It("boots an ISO inserted through the BMC, as metal3 does with virtual media", func(ctx SpecContext) {
		inv := shared.lab.Inventory()
		h := inv.Hosts[0]
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: h.Name}, bmh)).To(Succeed())
		// Detached: the bare-metal operator must not manage the host
		// while this spec drives its BMC directly.
		setAnnotation(ctx, bmh, detachedAnnotation, "suite")
		sys, c := redfishSystem(ctx, bmh)
		DeferCleanup(func(ctx SpecContext) {
			_ = sys.Reset(gfredfish.ForceOffResetType)
			ejectAll(sys)
			setAnnotation(ctx, bmh, detachedAnnotation, "")
		})

		store, err := images.Open(images.StoreOptions{})
		Expect(err).NotTo(HaveOccurred())
		marker := images.MarkerSpec{Marker: "suite-" + shared.lab.RunID()}
		iso, err := store.MarkerISO(marker)
		Expect(err).NotTo(HaveOccurred())
		content, err := os.ReadFile(iso)
		Expect(err).NotTo(HaveOccurred())
		imageURL := serveImage("discovery.iso", content)

		By("ejecting, inserting the ISO, setting boot Cd once and powering on")
		ejectAll(sys)
		cd := cdrom(sys)
		Expect(cd.InsertMedia(imageURL, true, true)).To(Succeed())
		Expect(sys.SetBoot(gfredfish.Boot{BootSourceOverrideTarget: gfredfish.CdBootSourceOverrideTarget,
			BootSourceOverrideEnabled: gfredfish.OnceBootSourceOverrideEnabled})).To(Succeed())
		Expect(sys.Reset(gfredfish.OnResetType)).To(Succeed())
		start := time.Now()
		Eventually(func() (string, error) {
			raw, err := os.ReadFile(h.SerialLog)
			return string(raw), err
		}).WithContext(ctx).WithTimeout(90 * time.Second).Should(ContainSubstring(marker.Line() + " uuid=" + h.UUID))
		AddReportEntry("power-on to marker", time.Since(start).Round(100*time.Millisecond).String())

		By("powering off through the BMC")
		Expect(sys.Reset(gfredfish.ForceOffResetType)).To(Succeed())
		Eventually(func() gfredfish.PowerState {
			s, err := gfredfish.GetComputerSystem(c, sys.ODataID)
			if err != nil {
				return ""
			}
			return s.PowerState
		}).WithContext(ctx).Should(Equal(gfredfish.OffPowerState))
	}, SpecTimeout(3*time.Minute))

	// The flows on the lab's hosts (label flows): ZTP, MAPI and CAPI
	// installs, scaling and remediation, which the parity suite runs at
	// full length too; CI leaves them out of this suite to stay within
	// its budget (.ci/run).
	Context("the flows on the lab's hosts", Label("flows"), func() {
		ztpSpecs()
		mapiSpecs()
		capiSpecs()
	})
})

// redfishSystem logs into a hub BareMetalHost's BMC with its Secret, as
// metal3 does, and returns the system its address names.
func redfishSystem(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) (*gfredfish.ComputerSystem, *gofish.APIClient) {
	return redfishSystemIn(ctx, shared.lab.Client(), bmh)
}

// redfishSystemIn does the same for a BareMetalHost of the cluster c
// reaches (a spoke's machine API hosts).
func redfishSystemIn(ctx context.Context, c client.Client, bmh *bmov1alpha1.BareMetalHost) (*gfredfish.ComputerSystem, *gofish.APIClient) {
	secret := &corev1.Secret{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: bmh.Spec.BMC.CredentialsName}, secret)).To(Succeed())
	addr, err := url.Parse(strings.TrimPrefix(bmh.Spec.BMC.Address, "redfish-virtualmedia+"))
	Expect(err).NotTo(HaveOccurred())
	bmc, err := gofish.Connect(gofish.ClientConfig{
		Endpoint: addr.Scheme + "://" + addr.Host, BasicAuth: true,
		Username: string(secret.Data["username"]), Password: string(secret.Data["password"]),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bmc.Logout)
	sys, err := gfredfish.GetComputerSystem(bmc, addr.Path)
	Expect(err).NotTo(HaveOccurred())
	return sys, bmc
}

// hostPlacement is where and how a spec wants one of the lab's hosts.
type hostPlacement struct {
	Namespace, Name     string
	Labels, Annotations map[string]string
	Online              bool
}

// moveLabHost replaces the lab's BareMetalHost of a host (and its BMC
// Secret) with one written as the spec's user writes it.
func moveLabHost(ctx context.Context, labHost string, to hostPlacement) {
	c := shared.lab.Client()
	inv := shared.lab.Inventory()
	old := &bmov1alpha1.BareMetalHost{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: labHost}, old)).To(Succeed())
	creds := &corev1.Secret{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: old.Spec.BMC.CredentialsName}, creds)).To(Succeed())
	Expect(c.Delete(ctx, old)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(old), old))
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeTrue(), "the lab's BareMetalHost %s goes away", labHost)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: to.Name + "-bmc", Namespace: to.Namespace}, Data: creds.Data}
	Expect(c.Create(ctx, secret)).To(Succeed())
	Expect(c.Create(ctx, &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: to.Name, Namespace: to.Namespace, Labels: to.Labels, Annotations: to.Annotations},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:                   bmov1alpha1.BMCDetails{Address: old.Spec.BMC.Address, CredentialsName: secret.Name},
			BootMACAddress:        old.Spec.BootMACAddress,
			BootMode:              old.Spec.BootMode,
			Online:                to.Online,
			AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled,
		},
	})).To(Succeed())
}

func cdrom(sys *gfredfish.ComputerSystem) *gfredfish.VirtualMedia {
	media, err := sys.VirtualMedia()
	Expect(err).NotTo(HaveOccurred())
	for _, m := range media {
		if m.ID == "Cd" {
			return m
		}
	}
	Fail("system has no Cd virtual media")
	return nil
}

func ejectAll(sys *gfredfish.ComputerSystem) {
	media, err := sys.VirtualMedia()
	Expect(err).NotTo(HaveOccurred())
	for _, m := range media {
		if m.Inserted {
			Expect(m.EjectMedia()).To(Succeed())
		}
	}
}

// serveImage serves content at /name on 127.0.0.1 until the spec ends, as
// the image server a metal3 deployment points its BMCs at.
func serveImage(name string, content []byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+name {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(content)
	}))
	DeferCleanup(srv.Close)
	return srv.URL + "/" + name
}

const detachedAnnotation = "baremetalhost.metal3.io/detached"

// setAnnotation sets (or, with value "", removes) an annotation by patch.
func setAnnotation(ctx context.Context, obj client.Object, key, value string) {
	var v any = value
	if value == "" {
		v = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	Expect(shared.lab.Client().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}
