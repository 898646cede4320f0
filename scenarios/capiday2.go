package scenarios

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
)

// CAPIDay2WorkerInput is a worker a CAPI site adds on day 2.
type CAPIDay2WorkerInput struct {
	Hosts *framework.HostPool
	// Hub holds the site; Spoke is its workload cluster.
	Hub, Spoke client.Client
	Site       CAPISite
	// HostName names the new host; Pool is the pool label it gets, which
	// the new MachineDeployment's template selects besides the worker
	// role, so that it takes that host and no other free one.
	HostName, Pool string
	Interval       framework.Interval
	// Ready, if set, is called with the Node's name once it is Ready,
	// before waiting for its Machine.
	Ready func(node string)
}

// AddCAPIDay2Worker is CAPI day 2: a worker joins a CAPI cluster only as a
// Machine, so a MachineDeployment of one replica (<site>-<pool>) over a
// new host of its own pool. It returns the new Node's name once its
// Machine is Running with that nodeRef.
func AddCAPIDay2Worker(ctx context.Context, in CAPIDay2WorkerInput) string {
	labels := map[string]string{HostRoleLabel: RoleWorker, HostPoolLabel: in.Pool}
	_, err := in.Hosts.Claim(ctx, framework.HostClaim{Namespace: in.Site.Namespace, Name: in.HostName, Labels: labels})
	Expect(err).NotTo(HaveOccurred())
	before := map[types.UID]bool{}
	nodes := &corev1.NodeList{}
	Expect(in.Spoke.List(ctx, nodes)).To(Succeed())
	for _, n := range nodes.Items {
		before[n.UID] = true
	}
	name := in.Site.Name + "-" + in.Pool
	By("creating MachineDeployment " + name + " of 1 replica over the new host")
	tmpl := in.Site.WorkerTemplate(name, labels)
	Expect(in.Hub.Create(ctx, tmpl)).To(Succeed())
	md := in.Site.MachineDeployment(name, 1)
	md.Spec.Template.Spec.InfrastructureRef.Name = tmpl.Name
	Expect(in.Hub.Create(ctx, md)).To(Succeed())

	By("waiting for the new worker's Node to be Ready")
	var node string
	Eventually(func(g Gomega) {
		list := &corev1.NodeList{}
		g.Expect(in.Spoke.List(ctx, list)).To(Succeed())
		var fresh []string
		for i := range list.Items {
			if n := &list.Items[i]; !before[n.UID] && NodeReady(n) {
				fresh = append(fresh, n.Name)
			}
		}
		g.Expect(fresh).To(HaveLen(1), "one new Ready Node")
		node = fresh[0]
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
	if in.Ready != nil {
		in.Ready(node)
	}
	By("waiting for its Machine to be Running")
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(in.Hub.List(ctx, list, client.InNamespace(in.Site.Namespace),
			client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		g.Expect(list.Items[0].Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
		g.Expect(list.Items[0].Status.NodeRef.Name).To(Equal(node))
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
	return node
}
