package replacement

import (
	"context"
	"fmt"
	"sort"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/scenarios"
)

// NameControlPlane: a control-plane host hangs and comes back. MAPI: a
// MachineHealthCheck over the installer's master Machines with a
// Metal3RemediationTemplate (its remediation path has no owner check, so
// masters are eligible; OpenShift's Metal3Remediation only ever
// power-cycles a master, never deletes it); CAPI: a MachineHealthCheck
// over the control plane's Machines with CAPM3's template.
const NameControlPlane = "replacement-control-plane"

// noEtcd is what the lab does not model in NameControlPlane, said where
// the report shows the run.
const noEtcd = "the lab models no etcd membership: the spoke's API server and etcd run outside the hosts, so no member is lost, " +
	"no quorum is at stake and neither cluster-etcd-operator's EtcdQuorumOperator hook nor any member removal is observed"

// target is the worker a run breaks: the one whose Node name sorts last,
// so that both flows break the host of the same name (the only one in a
// worker pool of one replica; master-2 of a control plane).
func target(ws []worker) worker {
	Expect(ws).NotTo(BeEmpty())
	sorted := append([]worker(nil), ws...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	return sorted[len(sorted)-1]
}

// manageMasterPower gives the spoke's control-plane hosts their BMC, as
// an admin does who wants power-based remediation of masters: the
// installer writes their BareMetalHosts without BMC details (the cluster
// cannot read the hub's Secrets), so the bare-metal operator leaves them
// unmanaged and nothing could power-cycle them; their hub hosts are
// detached and paused once installed, so the spoke's operator becomes
// their only manager. It puts the role label on them that the run lists
// hosts by, and waits until they are externally provisioned and on.
func (s *machineSetSide) manageMasterPower(ctx context.Context) {
	By("giving the spoke's control-plane hosts the BMC address and credentials of their hub hosts")
	list := &machinev1beta1.MachineList{}
	Expect(s.spoke.List(ctx, list, client.InNamespace(scenarios.MachineAPINamespace), client.MatchingLabels(s.selector()))).To(Succeed())
	Expect(list.Items).To(HaveLen(s.pool.replicas), "the installer's master Machines")
	var names []string
	for _, m := range list.Items {
		host := s.host(ctx, Default, worker{Name: m.Name})
		s.giveBMC(ctx, host)
		names = append(names, host.Name)
	}
	iv := interval(s.in, "wait-object")
	Eventually(func(g Gomega) {
		for _, name := range names {
			h := s.hostNamed(ctx, g, name)
			g.Expect(h.Status.Provisioning.State).To(Equal(bmov1alpha1.StateExternallyProvisioned), "host %s", name)
			g.Expect(h.Status.OperationalStatus).To(Equal(bmov1alpha1.OperationalStatusOK), "host %s (%s)", name, h.Status.ErrorMessage)
			g.Expect(h.Status.PoweredOn).To(BeTrue(), "host %s on", name)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// giveBMC copies the BMC of the hub host with the same boot MAC to the
// spoke's host, credentials into a Secret of its own there.
func (s *machineSetSide) giveBMC(ctx context.Context, host *bmov1alpha1.BareMetalHost) {
	hub := s.in.Lab.Client()
	hubHosts := &bmov1alpha1.BareMetalHostList{}
	Expect(hub.List(ctx, hubHosts, client.InNamespace(s.base.Namespace))).To(Succeed())
	var from *bmov1alpha1.BareMetalHost
	for i := range hubHosts.Items {
		if strings.EqualFold(hubHosts.Items[i].Spec.BootMACAddress, host.Spec.BootMACAddress) {
			from = &hubHosts.Items[i]
		}
	}
	Expect(from).NotTo(BeNil(), "the hub host booting from %s, as the spoke's host %s", host.Spec.BootMACAddress, host.Name)
	creds := &corev1.Secret{}
	Expect(hub.Get(ctx, client.ObjectKey{Namespace: from.Namespace, Name: from.Spec.BMC.CredentialsName}, creds)).To(Succeed())
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: host.Name + "-bmc", Namespace: host.Namespace}, Data: creds.Data}
	if err := s.spoke.Create(ctx, secret); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred(), "create the BMC Secret of %s", host.Name)
	}
	p := client.MergeFrom(host.DeepCopy())
	if host.Labels == nil {
		host.Labels = map[string]string{}
	}
	for k, v := range s.pool.labels() {
		host.Labels[k] = v
	}
	host.Spec.BMC = bmov1alpha1.BMCDetails{Address: from.Spec.BMC.Address, CredentialsName: secret.Name,
		DisableCertificateVerification: from.Spec.BMC.DisableCertificateVerification}
	Expect(s.spoke.Patch(ctx, host, p)).To(Succeed(), fmt.Sprintf("give host %s its BMC", host.Name))
}
