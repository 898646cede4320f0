package labsuite

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/discovery"

	"github.com/paritylab/paritylab/lab/binaries"
)

var _ = Describe("The hub", Label("lab"), func() {
	It("answers with the Kubernetes version the lab builds", func() {
		dc, err := discovery.NewDiscoveryClientForConfig(shared.lab.RESTConfig())
		Expect(err).NotTo(HaveOccurred())
		v, err := dc.ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(v.GitVersion).To(Equal(binaries.KubernetesVersion))
	})

	It("serves every CRD the flows use, each Established", func(ctx SpecContext) {
		want := []string{
			// Cluster API core
			"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io",
			"machinedeployments.cluster.x-k8s.io", "machinehealthchecks.cluster.x-k8s.io",
			// metal3 and its CAPI provider
			"baremetalhosts.metal3.io", "metal3clusters.infrastructure.cluster.x-k8s.io",
			"metal3machines.infrastructure.cluster.x-k8s.io", "metal3machinetemplates.infrastructure.cluster.x-k8s.io",
			"metal3remediations.infrastructure.cluster.x-k8s.io", "metal3remediationtemplates.infrastructure.cluster.x-k8s.io",
			// OpenShift machine API
			"machines.machine.openshift.io", "machinesets.machine.openshift.io", "machinehealthchecks.machine.openshift.io",
			// hive and the assisted service
			"clusterdeployments.hive.openshift.io", "clusterimagesets.hive.openshift.io",
			"infraenvs.agent-install.openshift.io", "agents.agent-install.openshift.io",
			"nmstateconfigs.agent-install.openshift.io", "agentclusterinstalls.extensions.hive.openshift.io",
		}
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		Expect(shared.lab.Client().List(ctx, list)).To(Succeed())
		established := map[string]bool{}
		for _, crd := range list.Items {
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established[crd.Name] = true
				}
			}
			Expect(established).To(HaveKey(crd.Name), "CRD %s is not Established", crd.Name)
		}
		for _, name := range want {
			Expect(established).To(HaveKey(name))
		}
		AddReportEntry("CRDs established", len(established))
	}, SpecTimeout(time.Minute))
})
