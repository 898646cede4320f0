package labsuite

import (
	"context"
	"net/url"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/mapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// ztpDay2Host is the name the day-2 worker gets in the site (and its node).
const ztpDay2Host = "worker-0"

// ztpDay2Spec adds the first worker-pool host to the installed ZTP site as
// a ZTP user does (a BareMetalHost labelled with the InfraEnv) and checks
// the worker joins and the spoke records it as assisted-service's BMAC
// does. It hands the host back to the lab's pool at the end, also on
// failure, for the machine API specs.
func ztpDay2Spec(ctx context.Context) {
	c := shared.lab.Client()
	labHost := shared.lab.Inventory().Hosts[workerPoolHosts[0]].Name
	original := &bmov1alpha1.BareMetalHost{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: shared.lab.Inventory().Namespace, Name: labHost}, original)).To(Succeed())
	wl := shared.lab.Workload(ztpSite, ztpSite)
	Expect(wl).NotTo(BeNil())
	s, err := mapi.Scheme()
	Expect(err).NotTo(HaveOccurred())
	spoke, err := client.New(wl.RESTConfig(), client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())

	By("labelling a BareMetalHost for the host with the site's InfraEnv")
	start := time.Now()
	moveLabHost(ctx, labHost, hostPlacement{Namespace: ztpSite, Name: ztpDay2Host, Online: true,
		Labels:      map[string]string{agentv1beta1.InfraEnvNameLabel: ztpSite},
		Annotations: map[string]string{"bmac.agent-install.openshift.io/hostname": ztpDay2Host, "bmac.agent-install.openshift.io/role": "worker"}})
	DeferCleanup(func(ctx SpecContext) { returnDay2Host(ctx, spoke, original) }, NodeTimeout(8*time.Minute))

	By("waiting for the worker's Node to join the spoke Ready, and its hub BareMetalHost to be detached")
	Eventually(func(g Gomega) {
		node := &corev1.Node{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Name: ztpDay2Host}, node)).To(Succeed())
		g.Expect(node.Labels).To(HaveKey("node-role.kubernetes.io/worker"))
		g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
		hub := &bmov1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: ztpDay2Host}, hub)).To(Succeed())
		g.Expect(hub.Annotations).To(HaveKey(detachedAnnotation))
	}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	AddReportEntry("ZTP day-2: worker joined", time.Since(start).Round(time.Second).String())

	By("finding the spoke's BareMetalHost and Machine <cd>-<bmh> for it, the Machine Running and linked")
	machineName := ztpSite + "-" + ztpDay2Host
	Eventually(func(g Gomega) {
		m := &machinev1beta1.Machine{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: machineName}, m)).To(Succeed())
		g.Expect(m.OwnerReferences).To(BeEmpty())
		g.Expect(m.Labels).To(HaveKeyWithValue(mapi.RoleLabel, "worker"))
		g.Expect(m.Labels).To(HaveKeyWithValue(mapi.ClusterLabel, ztpSite), "the BMAC labels it with the ClusterDeployment's name")
		g.Expect(m.Labels).NotTo(HaveKey(mapi.MachineSetLabel))
		g.Expect(m.Annotations).To(HaveKeyWithValue(mapi.HostAnnotation, machineAPINS+"/"+ztpDay2Host))
		g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)))
		g.Expect(m.Status.NodeRef).To(HaveField("Name", ztpDay2Host))
		bmh := &bmov1alpha1.BareMetalHost{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: ztpDay2Host}, bmh)).To(Succeed())
		// The hub host's spec without its BMC: the custom deploy that
		// provisioned it (the converged flow), no image.
		g.Expect(bmh.Spec.ExternallyProvisioned).To(BeFalse())
		g.Expect(bmh.Spec.CustomDeploy).To(HaveField("Method", "start_assisted_install"))
		g.Expect(bmh.Spec.Image).To(BeNil())
		g.Expect(bmh.Spec.BMC.Address).To(BeEmpty())
		g.Expect(bmh.Spec.BootMACAddress).To(Equal(original.Spec.BootMACAddress))
		g.Expect(bmh.Annotations).To(HaveKeyWithValue("inspect.metal3.io", "disabled"))
		g.Expect(bmh.Spec.ConsumerRef).To(HaveField("Name", machineName))
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateUnmanaged))
		g.Expect(m.Spec.ProviderID).To(HaveValue(Equal(mapi.ProviderID(bmh))))
		node := &corev1.Node{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Name: ztpDay2Host}, node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(mapi.ProviderID(bmh)))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	AddReportEntry("ZTP day-2: spoke Machine Running", time.Since(start).Round(time.Second).String())

	ms := &machinev1beta1.MachineSet{}
	Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: mapi.WorkerMachineSetName(wl.InfrastructureName())}, ms)).To(Succeed())
	Expect(ms.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)), "a day-2 host's Machine belongs to no MachineSet")
}

// returnDay2Host removes the day-2 worker from the spoke and the site and
// gives the lab's BareMetalHost back, powered off, as the pool specs
// expect it.
func returnDay2Host(ctx context.Context, spoke client.Client, original *bmov1alpha1.BareMetalHost) {
	c := shared.lab.Client()
	By("handing the day-2 host back to the lab's pool")
	// MAO's Machine controller drains and deletes the Node and releases
	// the unmanaged host, which nothing powers off.
	deleteAndWait(ctx, spoke, &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: machineAPINS, Name: ztpSite + "-" + ztpDay2Host}})
	deleteAndWait(ctx, spoke, &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: machineAPINS, Name: ztpDay2Host}})
	deleteAndWait(ctx, spoke, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ztpDay2Host}})

	hub := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: ztpDay2Host}, hub); err == nil {
		powerOff(ctx, hub)
	}
	agents := &agentv1beta1.AgentList{}
	Expect(c.List(ctx, agents, client.InNamespace(ztpSite), client.MatchingLabels{agentv1beta1.BareMetalHostLabel: ztpDay2Host})).To(Succeed())
	for i := range agents.Items {
		deleteAndWait(ctx, c, &agents.Items[i])
	}
	deleteAndWait(ctx, c, &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ztpSite, Name: ztpDay2Host}})
	deleteAndWait(ctx, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ztpSite, Name: ztpDay2Host + "-bmc"}})
	restored := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: original.Name, Namespace: original.Namespace, Labels: original.Labels, Annotations: original.Annotations},
		Spec:       *original.Spec.DeepCopy(),
	}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, restored))).To(Succeed())
}

func deleteAndWait(ctx context.Context, c client.Client, obj client.Object) {
	Expect(client.IgnoreNotFound(c.Delete(ctx, obj))).To(Succeed(), "delete %T %s", obj, obj.GetName())
	Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(BeTrue(), "%T %s goes away", obj, obj.GetName())
}

// powerOff powers a hub host off and ejects its media through its BMC.
// It logs out itself: cleanup code may not register more cleanups.
func powerOff(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) {
	secret := &corev1.Secret{}
	Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: bmh.Spec.BMC.CredentialsName}, secret)).To(Succeed())
	addr, err := url.Parse(strings.TrimPrefix(bmh.Spec.BMC.Address, "redfish-virtualmedia+"))
	Expect(err).NotTo(HaveOccurred())
	bmc, err := gofish.Connect(gofish.ClientConfig{Endpoint: addr.Scheme + "://" + addr.Host, BasicAuth: true,
		Username: string(secret.Data["username"]), Password: string(secret.Data["password"])})
	Expect(err).NotTo(HaveOccurred())
	defer bmc.Logout()
	sys, err := gfredfish.GetComputerSystem(bmc, addr.Path)
	Expect(err).NotTo(HaveOccurred())
	Expect(sys.Reset(gfredfish.ForceOffResetType)).To(Succeed())
	ejectAll(sys)
}
