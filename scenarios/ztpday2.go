package scenarios

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
)

// ZTPDay2WorkerInput is a worker a ZTP site adds on day 2.
type ZTPDay2WorkerInput struct {
	Hosts *framework.HostPool
	// Hub holds the site; Spoke is its installed cluster.
	Hub, Spoke client.Client
	Site       ZTPSite
	// Name is the host's name, which its Node takes.
	Name     string
	Interval framework.Interval
	// Ready, if set, is called once the Node is Ready, before waiting for
	// what the flow does with the host after.
	Ready func()
}

// AddZTPDay2Worker is ZTP day 2: a BareMetalHost labelled with the site's
// InfraEnv on the hub; the assisted flow boots, installs and joins it. It
// returns the host's Machine in the spoke, which the BMAC writes without
// an owner, once the spoke has everything the flow writes for the host:
// the hub host detached, and in the spoke its BareMetalHost (taken in by
// the spoke's bare-metal operator) and the Machine linked to the Node.
// Observing before that would record when the scenario moved on, not
// what the flow did.
func AddZTPDay2Worker(ctx context.Context, in ZTPDay2WorkerInput) *machinev1beta1.Machine {
	_, err := in.Hosts.Claim(ctx, in.Site.HostClaim(in.Name, "worker"))
	Expect(err).NotTo(HaveOccurred())
	By("waiting for the ZTP day-2 host " + in.Name + " to join the spoke Ready")
	Eventually(func(g Gomega) {
		ExpectNodeReady(ctx, g, in.Spoke, in.Name)
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
	if in.Ready != nil {
		in.Ready()
	}
	By("waiting for its hub host to be detached")
	Eventually(func(g Gomega) {
		bmh := &bmov1alpha1.BareMetalHost{}
		g.Expect(in.Hub.Get(ctx, client.ObjectKey{Namespace: in.Site.Namespace, Name: in.Name}, bmh)).To(Succeed())
		g.Expect(bmh.Annotations).To(HaveKey("baremetalhost.metal3.io/detached"))
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
	By("waiting for the ZTP day-2 host's BareMetalHost and Machine in the spoke")
	var machine *machinev1beta1.Machine
	Eventually(func(g Gomega) {
		bmh := &bmov1alpha1.BareMetalHost{}
		g.Expect(in.Spoke.Get(ctx, client.ObjectKey{Namespace: MachineAPINamespace, Name: in.Name}, bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).NotTo(BeEmpty(), "spoke BareMetalHost %s provisioning state", in.Name)
		g.Expect(bmh.Status.HardwareDetails).NotTo(BeNil(), "spoke BareMetalHost %s hardware details", in.Name)
		g.Expect(bmh.Annotations).NotTo(HaveKey(bmov1alpha1.HardwareDetailsAnnotation), "spoke BareMetalHost %s", in.Name)
		list := &machinev1beta1.MachineList{}
		g.Expect(in.Spoke.List(ctx, list, client.InNamespace(MachineAPINamespace))).To(Succeed())
		machine = nil
		for i, m := range list.Items {
			if m.Status.NodeRef != nil && m.Status.NodeRef.Name == in.Name {
				machine = &list.Items[i]
			}
		}
		g.Expect(machine).NotTo(BeNil(), "a Machine linked to node %s", in.Name)
		g.Expect(machine.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "Machine %s", machine.Name)
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
	return machine
}
