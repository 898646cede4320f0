package labsuite

import (
	"context"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/collections"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/scenarios"
)

// The CAPI cluster the specs install: a single-node OpenShift control
// plane and a MachineDeployment of workers, in a namespace of their own
// that the suite's hosts move into.
const (
	capiNamespace           = "capi-site"
	capiCluster             = "capi-sno"
	capiWorkers             = capiCluster + "-workers"
	capiDistributionVersion = "4.17.3"
	// capiSNOCores is assisted-service's minimum for a single-node
	// control plane.
	capiSNOCores = 8
)

// capiRun is what the CAPI specs share: the loopback servers the cluster
// depends on and the workload cluster once installed.
var capiRun struct {
	servers  *scenarios.CAPIServers
	workload client.Client
}

// capiSpecs install a cluster through Cluster API core, our agent
// providers and upstream CAPM3 on the suite's hosts, scale its workers
// and remediate one. They run after the MAPI specs, which leave the worker
// pool in the lab's namespace, deprovisioned and available.
func capiSpecs() {
	AfterAll(func(ctx SpecContext) { tearDownCAPI(ctx) }, NodeTimeout(15*time.Minute))

	It("installs a single-node control plane through the agent providers on a host a Metal3Machine claims", func(ctx SpecContext) {
		start := time.Now()
		c := shared.lab.Client()
		By("moving the control-plane host and the worker pool into the CAPI namespace")
		setUpCAPI(ctx)
		By("writing the Cluster, Metal3Cluster, templates, OpenshiftAssistedControlPlane and MachineDeployment")
		for _, o := range capiManifests() {
			Expect(c.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
		}

		By("waiting for the control-plane Metal3Machine to claim and provision the control-plane host")
		cpHost := shared.lab.Inventory().Hosts[capiControlPlaneHost].Name
		var m3m capm3v1beta2.Metal3Machine
		Eventually(func(g Gomega) {
			list := &capm3v1beta2.Metal3MachineList{}
			g.Expect(c.List(ctx, list, client.InNamespace(capiNamespace))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			m3m = list.Items[0]
			g.Expect(m3m.Annotations).To(HaveKeyWithValue("metal3.io/BareMetalHost", capiNamespace+"/"+cpHost))
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: cpHost}, bmh)).To(Succeed())
		Expect(bmh.Spec.ConsumerRef).To(HaveField("Kind", "Metal3Machine"))
		By("seeing CAPM3 hand the host the bootstrap provider's data Secret as its user data")
		Eventually(func(g Gomega) {
			machines := capiMachines(ctx, g, clusterv1.MachineControlPlaneLabel)
			g.Expect(machines).To(HaveLen(1))
			g.Expect(machines[0].Spec.Bootstrap.DataSecretName).NotTo(BeNil())
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
			g.Expect(bmh.Spec.UserData).To(HaveField("Name", *machines[0].Spec.Bootstrap.DataSecretName))
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("waiting for the control plane to report initialized with its kubeconfig")
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: capiCluster}, cp)).To(Succeed())
			g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
		}).WithContext(ctx).WithTimeout(20 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: control plane initialized", time.Since(start).Round(time.Second).String())
		capiRun.workload = capiWorkloadClient(ctx)

		By("seeing the control-plane Machine linked to its Node by the CAPI Machine controller")
		want := "metal3://" + capiNamespace + "/" + cpHost + "/" + m3m.Name
		Eventually(func(g Gomega) {
			machines := capiMachines(ctx, g, clusterv1.MachineControlPlaneLabel)
			g.Expect(machines).To(HaveLen(1))
			m := machines[0]
			g.Expect(m.Spec.ProviderID).To(Equal(want))
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "nodeRef")
			node := &corev1.Node{}
			g.Expect(capiRun.workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
			g.Expect(node.Spec.ProviderID).To(Equal(want))
			g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: day-1 wall time", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(30*time.Minute))

	It("scales a MachineDeployment 0→2→1: Machines Running with nodeRefs, the removed host deprovisioned and available", func(ctx SpecContext) {
		Expect(capiRun.workload).NotTo(BeNil(), "needs the cluster the previous spec installed")
		start := time.Now()
		By("scaling the workers to 2")
		scaleCAPIWorkers(ctx, 2)
		Eventually(func(g Gomega) {
			expectRunningCAPIWorkers(ctx, g, 2)
		}).WithContext(ctx).WithTimeout(30 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: 0→2 workers", time.Since(start).Round(time.Second).String())

		By("scaling the workers to 1")
		hostOf := map[string]string{}
		for _, m := range capiMachines(ctx, Default, "") {
			if m.Labels[clusterv1.MachineDeploymentNameLabel] == capiWorkers {
				hostOf[m.Name] = capiHostOf(m.Spec.ProviderID)
			}
		}
		start = time.Now()
		scaleCAPIWorkers(ctx, 1)
		Eventually(func(g Gomega) {
			expectRunningCAPIWorkers(ctx, g, 1)
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		var removed string
		for _, m := range capiMachines(ctx, Default, clusterv1.MachineDeploymentNameLabel) {
			delete(hostOf, m.Name)
		}
		Expect(hostOf).To(HaveLen(1), "one Machine went")
		for _, h := range hostOf {
			removed = h
		}
		By("seeing the removed Machine's host " + removed + " deprovisioned and available")
		Eventually(func(g Gomega) {
			bmh := &bmov1alpha1.BareMetalHost{}
			g.Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: removed}, bmh)).To(Succeed())
			g.Expect(bmh.Spec.ConsumerRef).To(BeNil())
			g.Expect(bmh.Spec.Image).To(BeNil())
			g.Expect(bmh.Spec.UserData).To(BeNil())
			g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable))
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: 2→1 workers", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(45*time.Minute))

	It("remediates a worker powered off through Redfish: the MachineHealthCheck asks, Metal3Remediation reboots, the node is Ready again", func(ctx SpecContext) {
		Expect(capiRun.workload).NotTo(BeNil(), "needs the cluster the first spec installed")
		c := shared.lab.Client()
		workers := capiMachines(ctx, Default, clusterv1.MachineDeploymentNameLabel)
		Expect(workers).To(HaveLen(1))
		machine := workers[0]
		By("creating a MachineHealthCheck on the workers with a Metal3RemediationTemplate (Reboot)")
		for _, o := range capiRemediationManifests() {
			Expect(c.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
		}
		Eventually(func(g Gomega) {
			mhc := &clusterv1.MachineHealthCheck{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: capiWorkers}, mhc)).To(Succeed())
			g.Expect(mhc.Status.ExpectedMachines).To(HaveValue(BeEquivalentTo(1)))
			g.Expect(mhc.Status.CurrentHealthy).To(HaveValue(BeEquivalentTo(1)))
		}).WithContext(ctx).WithTimeout(3*time.Minute).Should(Succeed(), "the MachineHealthCheck controller finds the worker healthy")

		By("powering the worker's host off through its BMC, and off again should the bare-metal operator's power sync turn it on before the MachineHealthCheck notices")
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: capiHostOf(machine.Spec.ProviderID)}, bmh)).To(Succeed())
		bootID := nodeBootID(ctx, machine)
		sys, bmc := redfishSystem(ctx, bmh)
		start := time.Now()
		m := &clusterv1.Machine{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
			if conditions.IsFalse(m, clusterv1.MachineHealthCheckSucceededCondition) {
				return // unhealthy: from here on the remediation owns the power
			}
			s, err := gfredfish.GetComputerSystem(bmc, sys.ODataID)
			g.Expect(err).NotTo(HaveOccurred())
			if s.PowerState != gfredfish.OffPowerState {
				g.Expect(s.Reset(gfredfish.ForceOffResetType)).To(Succeed())
			}
			g.Expect(conditions.IsFalse(m, clusterv1.MachineHealthCheckSucceededCondition)).To(BeTrue(), "the MachineHealthCheck marks the Machine unhealthy")
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: power off to unhealthy", time.Since(start).Round(time.Second).String())

		// CAPM3 v1.13.2's Reboot strategy: the first reboot sets
		// lastRemediated and leaves retryCount at 0 (it counts retries,
		// not reboots); the reboot annotation powers the host off, the
		// out-of-service taint lets the node's pods go, the annotation's
		// removal powers it on, and once the node is healthy the
		// MachineHealthCheck deletes the remediation.
		By("waiting for the MachineHealthCheck's Metal3Remediation to start a reboot")
		rem := &capm3v1beta2.Metal3Remediation{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&machine), rem)).To(Succeed())
			g.Expect(rem.OwnerReferences).To(ContainElement(HaveField("Name", machine.Name)), "created for the Machine by the MachineHealthCheck")
			g.Expect(rem.Status.LastRemediated).NotTo(BeNil(), "phase %q", rem.Status.Phase)
			g.Expect(rem.Status.Phase).To(BeElementOf(capm3v1beta2.PhaseRunning, capm3v1beta2.PhaseWaiting))
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(rem.Status.RetryCount).To(BeZero(), "the first reboot is not a retry")
		AddReportEntry("CAPI: power off to reboot remediation", time.Since(start).Round(time.Second).String())

		By("waiting for the node to be Ready again after a new boot, without the out-of-service taint, and the MachineHealthCheck to delete the remediation")
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
			g.Expect(conditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition)).To(BeTrue())
			node := &corev1.Node{}
			g.Expect(capiRun.workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
			g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
			g.Expect(node.Status.NodeInfo.BootID).NotTo(Equal(bootID), "the host booted again")
			g.Expect(node.Spec.Taints).NotTo(ContainElement(HaveField("Key", corev1.TaintNodeOutOfService)))
			err := c.Get(ctx, client.ObjectKeyFromObject(&machine), &capm3v1beta2.Metal3Remediation{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "remediation still there: %v", err)
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		Expect(bmh.Annotations).NotTo(HaveKey(HavePrefix("reboot.metal3.io")), "the reboot annotation is gone")
		Expect(bmh.Annotations).NotTo(HaveKey(capm3v1beta2.UnhealthyAnnotation))
		Expect(m.UID).To(Equal(machine.UID), "rebooted in place, not replaced")
		Expect(m.Spec.ProviderID).To(Equal(machine.Spec.ProviderID))
		AddReportEntry("CAPI: power off to Ready again", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(20*time.Minute))

	// CAPM3 v1.13.2 gives a Machine whose reboots ran out back to its
	// owner with the v1beta1 OwnerRemediated condition only
	// (baremetal/metal3remediation_manager.go, SetOwnerRemediatedConditionNew);
	// CAPI v1.13.4's MachineSet deletes only Machines whose v1beta2
	// OwnerRemediated condition is False (util/collections,
	// IsUnhealthyAndOwnerRemediated). Upstream, such a Machine stays until
	// someone deletes it; the spec shows that, then deletes it as an
	// operator would.
	It("replaces a worker whose host stays off: reboots run out, CAPM3 gives the Machine up, and once deleted a new one joins on the free host", func(ctx SpecContext) {
		Expect(capiRun.workload).NotTo(BeNil(), "needs the cluster the first spec installed")
		c := shared.lab.Client()
		workers := capiMachines(ctx, Default, clusterv1.MachineDeploymentNameLabel)
		Expect(workers).To(HaveLen(1))
		machine := workers[0]
		host := capiHostOf(machine.Spec.ProviderID)

		By("giving new remediations the shortest timeout CAPM3 allows (100 s), so that the reboot and its one retry run out soon")
		tmpl := &capm3v1beta2.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: capiWorkers, Namespace: capiNamespace}}
		Expect(c.Patch(ctx, tmpl, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"strategy":{"timeoutSeconds":100}}}}}`)))).To(Succeed())

		By("keeping the worker's host off through its BMC, whatever powers it on, until CAPM3 gives the Machine up")
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: host}, bmh)).To(Succeed())
		sys, bmc := redfishSystem(ctx, bmh)
		start := time.Now()
		m := &clusterv1.Machine{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
			rem := &capm3v1beta2.Metal3Remediation{}
			if c.Get(ctx, client.ObjectKeyFromObject(&machine), rem) == nil && rem.Status.Phase == capm3v1beta2.PhaseDeleting {
				return
			}
			s, err := gfredfish.GetComputerSystem(bmc, sys.ODataID)
			g.Expect(err).NotTo(HaveOccurred())
			if s.PowerState != gfredfish.OffPowerState {
				g.Expect(s.Reset(gfredfish.ForceOffResetType)).To(Succeed())
			}
			g.Expect(rem.Status.Phase).To(Equal(capm3v1beta2.PhaseDeleting), "the remediation gives up after its reboot and one retry")
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: power off to remediation given up", time.Since(start).Round(time.Second).String())

		By("seeing CAPM3 mark the host unhealthy, so that no Metal3Machine chooses it again")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		Expect(bmh.Annotations).To(HaveKey(capm3v1beta2.UnhealthyAnnotation))

		By("seeing the Machine handed to its owner the way CAPI v1.13's MachineSet does not read")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(&machine), m)).To(Succeed())
		Expect(v1beta1conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedV1Beta1Condition)).To(BeTrue(), "CAPM3 sets the v1beta1 OwnerRemediated condition")
		Expect(collections.IsUnhealthyAndOwnerRemediated(m)).To(BeFalse(),
			"CAPM3 now sets the v1beta2 OwnerRemediated condition too: the MachineSet deletes the Machine itself, and this spec should expect that")

		By("deleting the Machine, as an operator does, and waiting for the replacement on the free pool host with a Ready node")
		Expect(c.Delete(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			expectRunningCAPIWorkers(ctx, g, 1)
			replacement := capiMachines(ctx, g, clusterv1.MachineDeploymentNameLabel)[0]
			g.Expect(replacement.UID).NotTo(Equal(machine.UID))
			g.Expect(capiHostOf(replacement.Spec.ProviderID)).NotTo(Equal(host))
		}).WithContext(ctx).WithTimeout(15 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		AddReportEntry("CAPI: power off to replacement Ready", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(30*time.Minute))
}

// setUpCAPI creates the namespace and pull secret, serves the release the
// control plane installs, and moves the hosts in.
func setUpCAPI(ctx SpecContext) {
	c := shared.lab.Client()
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: capiNamespace}})).To(Succeed())
	var err error
	capiRun.servers, err = scenarios.StartCAPIServers(ctx, scenarios.CAPIServersInput{ReleaseRepository: shared.lab.ReleaseRepository(),
		Releases: shared.lab.Releases(), Version: capiDistributionVersion})
	Expect(err).NotTo(HaveOccurred())
	inv := shared.lab.Inventory()
	moveHostToCAPI(ctx, inv.Hosts[capiControlPlaneHost].Name, "control-plane")
	for _, i := range workerPoolHosts {
		moveHostToCAPI(ctx, inv.Hosts[i].Name, "worker")
	}
	Eventually(func(g Gomega) {
		list := &bmov1alpha1.BareMetalHostList{}
		g.Expect(c.List(ctx, list, client.InNamespace(capiNamespace))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1 + len(workerPoolHosts)))
		for _, h := range list.Items {
			g.Expect(h.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable), "host %s", h.Name)
		}
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// moveHostToCAPI replaces the lab's BareMetalHost of a host with one of the same
// name in the CAPI namespace, labelled with the role the Metal3Machine
// templates select.
func moveHostToCAPI(ctx context.Context, name, role string) {
	moveLabHost(ctx, name, hostPlacement{Namespace: capiNamespace, Name: name, Labels: map[string]string{scenarios.HostRoleLabel: role}})
}

// capiManifests are what a CAPI user writes for a single-node cluster
// with a MachineDeployment of workers, scaled to zero.
func capiManifests() []client.Object {
	key, err := scenarios.NewSSHKey()
	Expect(err).NotTo(HaveOccurred())
	site := scenarios.CAPISite{Namespace: capiNamespace, Name: capiCluster, ControlPlane: 1, Workers: 0,
		Version: capiDistributionVersion, ReleaseRepository: capiRun.servers.ReleaseRepository, Image: capiRun.servers.Image,
		PullSecret: `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`, SSHKey: key}
	return site.Manifests()
}

// capiRemediationManifests: a Reboot Metal3RemediationTemplate with a
// retry limit of 1 (CAPM3 counts retries after the first reboot, so two
// reboots, then the Machine goes to its owner) and a MachineHealthCheck
// on the workers whose node is not Ready for 10s.
func capiRemediationManifests() []client.Object {
	return []client.Object{
		&capm3v1beta2.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: capiWorkers, Namespace: capiNamespace},
			Spec: capm3v1beta2.Metal3RemediationTemplateSpec{Template: capm3v1beta2.Metal3RemediationTemplateResource{
				Spec: capm3v1beta2.Metal3RemediationSpec{Strategy: &capm3v1beta2.RemediationStrategy{
					Type: capm3v1beta2.RebootRemediationStrategy, RetryLimit: 1, TimeoutSeconds: 600}}}}},
		&clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: capiWorkers, Namespace: capiNamespace},
			Spec: clusterv1.MachineHealthCheckSpec{
				ClusterName: capiCluster,
				Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: capiWorkers}},
				Checks: clusterv1.MachineHealthCheckChecks{
					NodeStartupTimeoutSeconds: ptr.To[int32](1800),
					UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
						{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr.To[int32](10)},
						{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](10)},
					},
				},
				Remediation: clusterv1.MachineHealthCheckRemediation{TemplateRef: clusterv1.MachineHealthCheckRemediationTemplateReference{
					APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: capiWorkers}},
			}},
	}
}

// capiWorkloadClient reaches the installed cluster through the kubeconfig
// Secret the control-plane provider wrote, as CAPI core does.
func capiWorkloadClient(ctx context.Context) client.Client {
	secret := &corev1.Secret{}
	Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: capiNamespace, Name: capiCluster + "-kubeconfig"}, secret)).To(Succeed())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// capiMachines lists the cluster's Machines that are not being deleted,
// those with label key when key is not empty.
func capiMachines(ctx context.Context, g Gomega, key string) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	opts := []client.ListOption{client.InNamespace(capiNamespace), client.MatchingLabels{clusterv1.ClusterNameLabel: capiCluster}}
	if key != "" {
		opts = append(opts, client.HasLabels{key})
	}
	g.Expect(shared.lab.Client().List(ctx, list, opts...)).To(Succeed())
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp.IsZero() {
			out = append(out, m)
		}
	}
	return out
}

func scaleCAPIWorkers(ctx context.Context, n int) {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: capiWorkers, Namespace: capiNamespace}}
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	Expect(shared.lab.Client().Patch(ctx, md, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// expectRunningCAPIWorkers: n worker Machines Running, each with a nodeRef the
// CAPI Machine controller set, a metal3:// providerID, and a Ready Node
// that carries it; and no other worker Machine left.
func expectRunningCAPIWorkers(ctx context.Context, g Gomega, n int) {
	list := &clusterv1.MachineList{}
	g.Expect(shared.lab.Client().List(ctx, list, client.InNamespace(capiNamespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: capiWorkers})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(n))
	for _, m := range list.Items {
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		g.Expect(m.Spec.ProviderID).To(HavePrefix("metal3://"+capiNamespace+"/"), "Machine %s", m.Name)
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
		node := &corev1.Node{}
		g.Expect(capiRun.workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(m.Spec.ProviderID))
		g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue), "node %s", node.Name)
		g.Expect(node.Labels).To(HaveKey("node-role.kubernetes.io/worker"))
	}
}

// capiHostOf is the host name in metal3://<ns>/<host>/<m3m>.
func capiHostOf(id string) string {
	host := scenarios.CAPIHostOf(id)
	Expect(host).NotTo(BeEmpty(), "providerID %q", id)
	return host
}

// tearDownCAPI deletes the cluster (CAPI deletes its Machines, whose
// Metal3Machines deprovision and release their hosts) and stops the
// loopback servers; the lab's teardown removes the rest.
func tearDownCAPI(ctx SpecContext) {
	c := shared.lab.Client()
	_ = c.Delete(ctx, &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: capiWorkers, Namespace: capiNamespace}})
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: capiCluster, Namespace: capiNamespace}}
	if err := c.Delete(ctx, cluster); err == nil {
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
		}).WithContext(ctx).WithTimeout(10*time.Minute).WithPolling(3*time.Second).Should(BeTrue(), "the Cluster and its Machines go")
		hosts := &bmov1alpha1.BareMetalHostList{}
		Expect(c.List(ctx, hosts, client.InNamespace(capiNamespace))).To(Succeed())
		for _, h := range hosts.Items {
			Expect(h.Spec.ConsumerRef).To(BeNil(), "host %s released", h.Name)
		}
	}
	if capiRun.servers != nil {
		capiRun.servers.Close()
	}
}

// nodeBootID is the boot ID the node of a CAPI Machine reports now.
func nodeBootID(ctx context.Context, m clusterv1.Machine) string {
	Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has a node", m.Name)
	node := &corev1.Node{}
	Expect(capiRun.workload.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
	Expect(node.Status.NodeInfo.BootID).NotTo(BeEmpty())
	return node.Status.NodeInfo.BootID
}
