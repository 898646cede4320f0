package labsuite

// The machine API specs run after the ZTP specs, on the ZTP spoke, with the
// worker pool (workerPoolHosts). They move the pool's BareMetalHosts from
// the hub into the spoke's openshift-machine-api and scale the worker
// MachineSet the spoke's machine API (lab/mapi) installed.
//
// State they leave the pool hosts in: no Machines; each host deprovisioned
// by the spoke's bare-metal operator (disk metadata wiped, powered off,
// media ejected) and then moved back to the hub as a BareMetalHost in the
// lab's namespace with its original name, labels, BMC Secret and spec, which
// the hub's bare-metal operator registers again.

import (
	"context"
	"fmt"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/lab/workload"
)

const machineAPINS = workload.MachineAPINamespace

func mapiSpecs() {
	var (
		spoke   client.Client
		msName  string
		hubBMHs []*bmov1alpha1.BareMetalHost
	)

	It("scales the spoke's worker MachineSet 0→2→1 over the worker pool, with upstream MAO controllers and our bare-metal actuator", func(ctx SpecContext) {
		wl := shared.lab.Workload(ztpSite, ztpSite)
		Expect(wl).NotTo(BeNil(), "needs the ZTP spoke")
		s, err := mapi.Scheme()
		Expect(err).NotTo(HaveOccurred())
		spoke, err = client.New(wl.RESTConfig(), client.Options{Scheme: s})
		Expect(err).NotTo(HaveOccurred())
		msName = mapi.WorkerMachineSetName(wl.InfrastructureName())

		By("finding the worker MachineSet and worker-user-data the spoke's machine API installed")
		ms := &machinev1beta1.MachineSet{}
		Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: msName}, ms)).To(Succeed())
		Expect(ms.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
		Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: mapi.WorkerUserDataSecret}, &corev1.Secret{})).To(Succeed())

		By("moving the worker pool's BareMetalHosts from the hub into the spoke's openshift-machine-api")
		for _, i := range workerPoolHosts {
			hubBMHs = append(hubBMHs, moveHostToSpoke(ctx, spoke, shared.lab.Inventory().Hosts[i].Name))
		}
		Eventually(func(g Gomega) {
			for _, old := range hubBMHs {
				h := &bmov1alpha1.BareMetalHost{}
				g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: old.Name}, h)).To(Succeed())
				g.Expect(h.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable), "host %s: %s", h.Name, h.Status.ErrorMessage)
			}
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())

		start := time.Now()
		scaleMachineSet(ctx, spoke, msName, 2)
		machines := expectRunningWorkers(ctx, spoke, msName, 2, 15*time.Minute)
		AddReportEntry("MAPI: 0→2 workers Running with Nodes", time.Since(start).Round(time.Second).String())

		start = time.Now()
		scaleMachineSet(ctx, spoke, msName, 1)
		kept := expectRunningWorkers(ctx, spoke, msName, 1, 10*time.Minute)
		removed := machines[0]
		if removed.Name == kept[0].Name {
			removed = machines[1]
		}
		expectHostReleased(ctx, spoke, hostOf(removed), 10*time.Minute)
		Eventually(func() bool {
			return apierrors.IsNotFound(spoke.Get(ctx, client.ObjectKey{Name: removed.Status.NodeRef.Name}, &corev1.Node{}))
		}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeTrue(), "the Machine controller deletes the removed Machine's Node")
		AddReportEntry("MAPI: 2→1, host deprovisioned and available", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(40*time.Minute))

	It("remediates a worker whose host was powered off through Redfish: the MachineHealthCheck deletes it and the replacement joins", func(ctx SpecContext) {
		Expect(spoke).NotTo(BeNil(), "needs the previous spec")
		before := expectRunningWorkers(ctx, spoke, msName, 1, time.Minute)[0]
		mhc := &machinev1beta1.MachineHealthCheck{
			ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: machineAPINS},
			Spec: machinev1beta1.MachineHealthCheckSpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{mapi.MachineSetLabel: msName}},
				UnhealthyConditions: []machinev1beta1.UnhealthyCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: 10 * time.Second}},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 10 * time.Second}},
				},
				// Long enough for a replacement to be provisioned.
				NodeStartupTimeout: &metav1.Duration{Duration: 20 * time.Minute},
				MaxUnhealthy:       ptr.To(intstr.FromString("100%")),
			},
		}
		Expect(spoke.Create(ctx, mhc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(spoke.Delete(ctx, mhc))).To(Succeed()) })

		By("powering the worker's host off through its BMC")
		host := hostOf(before)
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: host}, bmh)).To(Succeed())
		sys, _ := redfishSystemIn(ctx, spoke, bmh)
		Expect(sys.Reset(gfredfish.ForceOffResetType)).To(Succeed())
		start := time.Now()

		By("seeing the upstream MachineHealthCheck delete the Machine")
		Eventually(func() bool {
			m := &machinev1beta1.Machine{}
			err := spoke.Get(ctx, client.ObjectKeyFromObject(&before), m)
			return apierrors.IsNotFound(err) || (err == nil && !m.DeletionTimestamp.IsZero())
		}).WithContext(ctx).WithTimeout(5*time.Minute).Should(BeTrue(), "MHC deletes the unhealthy Machine")
		AddReportEntry("MAPI: power off to remediation", time.Since(start).Round(time.Second).String())

		By("waiting for the replacement to run with a Ready Node")
		after := expectRunningWorkers(ctx, spoke, msName, 1, 15*time.Minute)[0]
		Expect(after.Name).NotTo(Equal(before.Name))
		// The actuator picks at random among available hosts, as upstream;
		// the remediated host is available again as soon as it is
		// deprovisioned (seconds, cleaning disabled), so either pool host
		// may carry the replacement. If it went to the other one, the
		// remediated host must end released.
		replacementHost := "the remediated one, reprovisioned"
		if hostOf(after) != host {
			replacementHost = "the other pool host"
			expectHostReleased(ctx, spoke, host, 10*time.Minute)
		}
		AddReportEntry("MAPI: replacement host", replacementHost)
		AddReportEntry("MAPI: power off to replacement Ready", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(30*time.Minute))

	It("scales to zero and hands the worker pool back to the hub", func(ctx SpecContext) {
		Expect(spoke).NotTo(BeNil(), "needs the previous specs")
		scaleMachineSet(ctx, spoke, msName, 0)
		Eventually(func(g Gomega) {
			list := &machinev1beta1.MachineList{}
			// The control-plane Machines the install recorded stay.
			g.Expect(spoke.List(ctx, list, client.InNamespace(machineAPINS), client.MatchingLabels{mapi.MachineSetLabel: msName})).To(Succeed())
			g.Expect(list.Items).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		for _, old := range hubBMHs {
			expectHostReleased(ctx, spoke, old.Name, 5*time.Minute)
		}
		for _, old := range hubBMHs {
			moveHostToHub(ctx, spoke, old)
		}
	}, SpecTimeout(20*time.Minute))
}

// moveHostToSpoke deletes the hub's BareMetalHost of a lab host and
// creates one of the same name in the spoke's machine API namespace, with
// a copy of its BMC Secret; it returns the hub's object to restore later.
func moveHostToSpoke(ctx context.Context, spoke client.Client, name string) *bmov1alpha1.BareMetalHost {
	c, ns := shared.lab.Client(), shared.lab.Inventory().Namespace
	old := &bmov1alpha1.BareMetalHost{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, old)).To(Succeed())
	creds := &corev1.Secret{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: old.Spec.BMC.CredentialsName}, creds)).To(Succeed())
	Expect(c.Delete(ctx, old)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(old), &bmov1alpha1.BareMetalHost{}))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(BeTrue(), "the hub's BareMetalHost %s goes away", name)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bmc", Namespace: machineAPINS}, Data: creds.Data}
	Expect(spoke.Create(ctx, secret)).To(Succeed())
	bmh := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: machineAPINS},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:            bmov1alpha1.BMCDetails{Address: old.Spec.BMC.Address, CredentialsName: secret.Name},
			BootMACAddress: old.Spec.BootMACAddress, BootMode: old.Spec.BootMode,
		},
	}
	Expect(spoke.Create(ctx, bmh)).To(Succeed())
	return old
}

// moveHostToHub deletes the spoke's BareMetalHost and its Secret and
// recreates the hub's as it was.
func moveHostToHub(ctx context.Context, spoke client.Client, old *bmov1alpha1.BareMetalHost) {
	bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: machineAPINS}}
	Expect(spoke.Delete(ctx, bmh)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(spoke.Get(ctx, client.ObjectKeyFromObject(bmh), bmh))
	}).WithContext(ctx).WithTimeout(2*time.Minute).Should(BeTrue(), "the spoke's BareMetalHost %s goes away", old.Name)
	Expect(spoke.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: old.Name + "-bmc", Namespace: machineAPINS}})).To(Succeed())
	restored := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace, Labels: old.Labels, Annotations: old.Annotations},
		Spec:       *old.Spec.DeepCopy(),
	}
	Expect(shared.lab.Client().Create(ctx, restored)).To(Succeed())
}

func scaleMachineSet(ctx context.Context, spoke client.Client, name string, replicas int32) {
	By(fmt.Sprintf("scaling MachineSet %s to %d", name, replicas))
	ms := &machinev1beta1.MachineSet{}
	Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: name}, ms)).To(Succeed())
	patch := client.MergeFrom(ms.DeepCopy())
	ms.Spec.Replicas = ptr.To(replicas)
	Expect(spoke.Patch(ctx, ms, patch)).To(Succeed())
}

// expectRunningWorkers waits for exactly n Machines of the MachineSet,
// each Running on a host of ours with a Ready Node linked the upstream
// way, and returns them.
func expectRunningWorkers(ctx context.Context, spoke client.Client, msName string, n int, timeout time.Duration) []machinev1beta1.Machine {
	var machines []machinev1beta1.Machine
	Eventually(func(g Gomega) {
		list := &machinev1beta1.MachineList{}
		g.Expect(spoke.List(ctx, list, client.InNamespace(machineAPINS), client.MatchingLabels{mapi.MachineSetLabel: msName})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, m := range list.Items {
			expectWorker(ctx, g, spoke, msName, &m)
		}
		machines = list.Items
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(5 * time.Second).Should(Succeed())
	return machines
}

func expectWorker(ctx context.Context, g Gomega, spoke client.Client, msName string, m *machinev1beta1.Machine) {
	g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "machine %s is being deleted", m.Name)
	g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "machine %s", m.Name)
	// Made by MAO's MachineSet controller: generated name, controller owner.
	g.Expect(m.Name).To(HavePrefix(msName + "-"))
	owner := metav1.GetControllerOf(m)
	g.Expect(owner).NotTo(BeNil())
	g.Expect(owner.Kind).To(Equal("MachineSet"))
	g.Expect(owner.Name).To(Equal(msName))
	g.Expect(m.Finalizers).To(ContainElement(machinev1beta1.MachineFinalizer), "set by MAO's Machine controller")
	g.Expect(m.Annotations).To(HaveKeyWithValue(mapi.HostAnnotation, machineAPINS+"/"+hostOf(*m)))
	g.Expect(m.Spec.ProviderID).To(HaveValue(HavePrefix("baremetalhost:///" + machineAPINS + "/" + hostOf(*m) + "/")))
	g.Expect(m.Status.NodeRef).NotTo(BeNil(), "machine %s: nodelink sets the nodeRef", m.Name)

	node := &corev1.Node{}
	g.Expect(spoke.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
	g.Expect(node.Spec.ProviderID).To(Equal(*m.Spec.ProviderID))
	g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue), "node %s", node.Name)
	// Set by MAO's nodelink controller only.
	g.Expect(node.Annotations).To(HaveKeyWithValue("machine.openshift.io/machine", machineAPINS+"/"+m.Name))
	g.Expect(node.Labels).To(HaveKey("node-role.kubernetes.io/worker"), "nodelink copies the Machine's spec labels")

	bmh := &bmov1alpha1.BareMetalHost{}
	g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: hostOf(*m)}, bmh)).To(Succeed())
	g.Expect(bmh.Spec.ConsumerRef).NotTo(BeNil())
	g.Expect(bmh.Spec.ConsumerRef.Kind).To(Equal("Machine"))
	g.Expect(bmh.Spec.ConsumerRef.Name).To(Equal(m.Name))
	g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
}

// hostOf is the BareMetalHost name the Machine's annotation names.
func hostOf(m machinev1beta1.Machine) string {
	_, name, _ := strings.Cut(m.Annotations[mapi.HostAnnotation], "/")
	return name
}

// expectHostReleased waits until the host is deprovisioned, available,
// powered off and consumed by nothing.
func expectHostReleased(ctx context.Context, spoke client.Client, name string, timeout time.Duration) {
	Eventually(func(g Gomega) {
		h := &bmov1alpha1.BareMetalHost{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: name}, h)).To(Succeed())
		g.Expect(h.Spec.ConsumerRef).To(BeNil())
		g.Expect(h.Spec.Image).To(BeNil())
		g.Expect(h.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable))
		g.Expect(h.Status.PoweredOn).To(BeFalse())
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(3*time.Second).Should(Succeed(), "host %s released", name)
}
