package agentcluster_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// wantClusterDeployment is the spec of the ClusterDeployment of the
// fixture's AgentCluster (rule 15, upstream L292-340): installed, agent
// bare metal, its install the AgentClusterInstall of the same name, the
// control plane's base domain and Secrets, the first owner's UID as
// cluster and infrastructure ID.
func (f *fixture) wantClusterDeployment(firstOwner types.UID, password bool) hivev1.ClusterDeploymentSpec {
	spec := hivev1.ClusterDeploymentSpec{
		Installed:   true,
		ClusterName: "hcp",
		BaseDomain:  baseDomain,
		Platform:    hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
		ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
			Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: f.name,
		},
		PullSecretRef: &corev1.LocalObjectReference{Name: pullSecret},
		ClusterMetadata: &hivev1.ClusterMetadata{
			ClusterID:                string(firstOwner),
			InfraID:                  string(firstOwner),
			AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: kubeconfig},
		},
	}
	if password {
		spec.ClusterMetadata.AdminPasswordSecretRef = &corev1.LocalObjectReference{Name: kubeadminPassword}
	}
	return spec
}

// Rule 15: the ClusterDeployment and AgentClusterInstall, field by field;
// the status names the ClusterDeployment and is ready; the finalizer and
// the backup labels.
func TestClusterDeployment(t *testing.T) {
	f := newFixture(t)
	f.startController()
	ep := &capiagentv1.IgnitionEndpoint{
		Url:                    "https://ignition-server-clusters-hosted.apps.example.com:443/ignition",
		CaCertificateReference: &capiagentv1.CaCertificateReference{Namespace: f.ns, Name: ignitionCA},
	}
	f.agentCluster(withEndpoint(ep))

	ac := f.eventuallyReady()
	f.g.Expect(ac.Status.ClusterDeploymentRef).To(Equal(capiagentv1.ClusterDeploymentReference{Namespace: f.ns, Name: f.name}))
	f.g.Expect(ac.Finalizers).To(ConsistOf("agentclustercapi-provider.agent-install.openshift.io/deprovision"))
	f.g.Expect(ac.Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/backup", "true"))

	cd := f.clusterDeployment()
	f.g.Expect(cd).NotTo(BeNil())
	f.g.Expect(cd.Labels).To(Equal(map[string]string{"agentClusterRef": f.name}))
	f.g.Expect(cd.OwnerReferences).To(Equal([]metav1.OwnerReference{ownerRefOf(ac)}))
	f.g.Expect(cd.Spec).To(Equal(f.wantClusterDeployment(f.cluster.UID, true)))

	aci := f.eventuallyAgentClusterInstall()
	f.g.Expect(aci.OwnerReferences).To(BeEmpty())
	f.g.Expect(aci.Spec).To(Equal(hiveextv1.AgentClusterInstallSpec{
		ClusterDeploymentRef:  corev1.LocalObjectReference{Name: f.name},
		ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: 3},
		Networking:            hiveextv1.Networking{UserManagedNetworking: ptr.To(true)},
		IgnitionEndpoint: &hiveextv1.IgnitionEndpoint{
			URL:                    "https://ignition-server-clusters-hosted.apps.example.com:443",
			CaCertificateReference: &hiveextv1.CaCertificateReference{Namespace: f.ns, Name: ignitionCA},
		},
	}))

	for _, name := range []string{pullSecret, kubeconfig, kubeadminPassword, ignitionCA} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
		f.get(s)
		f.g.Expect(s.Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/backup", "true"), "Secret %s", name)
	}
}

// Rule 15: the ClusterDeployment's optional and positional parts: no
// kubeadmin password reference without one in the control plane's status;
// the IDs come from the first owner reference, whatever it is; a control
// plane served at v1beta2 only is read there (our departure: upstream
// falls back only on Not Found).
func TestClusterDeploymentVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup returns changes to the AgentCluster and the UID of its
		// first owner reference.
		setup    func(f *fixture) (func(*capiagentv1.AgentCluster), types.UID)
		password bool
		// clusterName is the control plane's name, when not "hcp".
		clusterName string
	}{
		{
			name: "no kubeadmin password",
			setup: func(f *fixture) (func(*capiagentv1.AgentCluster), types.UID) {
				u := f.controlPlane(hcpGVK, "hcp-no-password", controlPlaneStatus(false))
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() {
					f.cluster.Spec.ControlPlaneRef.Name = u.GetName()
				}, false)).To(Succeed())
				return nil, f.cluster.UID
			},
			clusterName: "hcp-no-password",
		},
		{
			name: "the first owner is not the Cluster",
			setup: func(*fixture) (func(*capiagentv1.AgentCluster), types.UID) {
				const other = "8d2c8bd4-0000-4000-8000-000000000001"
				return func(ac *capiagentv1.AgentCluster) {
					ac.OwnerReferences = append([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: other}}, ac.OwnerReferences...)
				}, other
			},
			password: true,
		},
		{
			name: "control plane served at v1beta2 only",
			setup: func(f *fixture) (func(*capiagentv1.AgentCluster), types.UID) {
				u := f.controlPlane(v1beta2GVK, "hcp", controlPlaneStatus(true))
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() {
					f.cluster.Spec.ControlPlaneRef.APIGroup = u.GroupVersionKind().Group
					f.cluster.Spec.ControlPlaneRef.Kind = u.GetKind()
				}, false)).To(Succeed())
				return nil, f.cluster.UID
			},
			password: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			change, firstOwner := tc.setup(f)
			if change == nil {
				change = func(*capiagentv1.AgentCluster) {}
			}
			f.agentCluster(withEndpoint(nil), change)
			cd := f.eventuallyClusterDeployment()
			want := f.wantClusterDeployment(firstOwner, tc.password)
			if tc.clusterName != "" {
				want.ClusterName = tc.clusterName
			}
			f.g.Expect(cd.Spec).To(Equal(want))
		})
	}
}

// Rule 15: the AgentClusterInstall's ignition endpoint is the
// AgentCluster's URL without its path, with its CA reference; none without
// a URL (upstream L422-436).
func TestIgnitionEndpoint(t *testing.T) {
	t.Parallel()
	ca := func(ns string) *capiagentv1.CaCertificateReference {
		return &capiagentv1.CaCertificateReference{Namespace: ns + "-ca", Name: ignitionCA}
	}
	cases := []struct {
		name string
		ep   func(ns string) *capiagentv1.IgnitionEndpoint
		want func(ns string) *hiveextv1.IgnitionEndpoint
	}{
		{
			name: "none",
			ep:   func(string) *capiagentv1.IgnitionEndpoint { return nil },
			want: func(string) *hiveextv1.IgnitionEndpoint { return nil },
		},
		{
			name: "path stripped, query kept, no CA",
			ep: func(string) *capiagentv1.IgnitionEndpoint {
				return &capiagentv1.IgnitionEndpoint{Url: "https://10.0.0.5:31187/ignition/worker?v=1"}
			},
			want: func(string) *hiveextv1.IgnitionEndpoint {
				return &hiveextv1.IgnitionEndpoint{URL: "https://10.0.0.5:31187?v=1"}
			},
		},
		{
			name: "CA reference copied, its namespace kept",
			ep: func(ns string) *capiagentv1.IgnitionEndpoint {
				return &capiagentv1.IgnitionEndpoint{Url: "https://ignition.example.com/ignition", CaCertificateReference: ca(ns)}
			},
			want: func(ns string) *hiveextv1.IgnitionEndpoint {
				return &hiveextv1.IgnitionEndpoint{URL: "https://ignition.example.com",
					CaCertificateReference: &hiveextv1.CaCertificateReference{Namespace: ns + "-ca", Name: ignitionCA}}
			},
		},
		{
			name: "no URL: no endpoint, CA or not",
			ep: func(ns string) *capiagentv1.IgnitionEndpoint {
				return &capiagentv1.IgnitionEndpoint{CaCertificateReference: ca(ns)}
			},
			want: func(string) *hiveextv1.IgnitionEndpoint { return nil },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.agentCluster(withEndpoint(tc.ep(f.ns)), unwatched)
			f.reconcileUntilReady()
			aci := &hiveextv1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name}}
			f.get(aci)
			f.g.Expect(aci.Spec.IgnitionEndpoint).To(Equal(tc.want(f.ns)))
		})
	}
}

// reconcileUntilReady calls Reconcile directly, as often as it takes for
// the AgentCluster to become ready (each call does one step).
func (f *fixture) reconcileUntilReady() {
	f.t.Helper()
	for range 5 {
		_, err := f.reconcile()
		f.g.Expect(err).NotTo(HaveOccurred())
		if f.getAgentCluster().Status.Ready {
			return
		}
	}
	f.t.Fatal("AgentCluster not ready after five reconciles")
}

// Rule 15: without its owner Cluster, the Cluster's control plane
// reference, or the control plane's required fields, the provider creates
// nothing and looks again in 5 s; once the control plane reports its
// kubeconfig, it creates the ClusterDeployment.
func TestWaitsForTheControlPlane(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(f *fixture) func(*capiagentv1.AgentCluster)
		// resolve supplies what was missing; nil when the case ends there.
		resolve func(f *fixture)
	}{
		{
			name: "no owner Cluster",
			setup: func(*fixture) func(*capiagentv1.AgentCluster) {
				return func(ac *capiagentv1.AgentCluster) { ac.OwnerReferences = nil }
			},
		},
		{
			name: "an owner Cluster of another API version",
			setup: func(*fixture) func(*capiagentv1.AgentCluster) {
				return func(ac *capiagentv1.AgentCluster) { ac.OwnerReferences[0].APIVersion = "cluster.x-k8s.io/v1alpha4" }
			},
		},
		{
			name: "no control plane reference",
			setup: func(f *fixture) func(*capiagentv1.AgentCluster) {
				f.g.Expect(env.Client.Delete(context.Background(), f.cluster)).To(Succeed())
				c := f.newCluster(hcpGVK, "")
				return func(ac *capiagentv1.AgentCluster) { ac.OwnerReferences[0].UID = c.UID }
			},
		},
		{
			name: "no kubeconfig in the control plane's status yet",
			setup: func(f *fixture) func(*capiagentv1.AgentCluster) {
				f.controlPlane(hcpGVK, "starting", nil)
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() {
					f.cluster.Spec.ControlPlaneRef.Name = "starting"
				}, false)).To(Succeed())
				return func(*capiagentv1.AgentCluster) {}
			},
			resolve: func(f *fixture) {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(hcpGVK)
				u.SetNamespace(f.ns)
				u.SetName("starting")
				f.setControlPlaneStatus(u, controlPlaneStatus(true))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.agentCluster(withEndpoint(nil), tc.setup(f), unwatched)
			result, err := f.reconcile()
			f.g.Expect(err).NotTo(HaveOccurred())
			f.g.Expect(result).To(Equal(ctrl.Result{RequeueAfter: dependencyWait}))
			f.g.Expect(f.clusterDeployment()).To(BeNil())
			f.g.Expect(f.getAgentCluster().Status.ClusterDeploymentRef).To(BeZero())
			if tc.resolve == nil {
				return
			}
			tc.resolve(f)
			result, err = f.reconcile()
			f.g.Expect(err).NotTo(HaveOccurred())
			f.g.Expect(result).To(BeZero())
			f.g.Expect(f.clusterDeployment()).NotTo(BeNil())
		})
	}
}

// A control plane reference naming nothing (at v1beta1, and not served at
// v1beta2), or a status naming a ClusterDeployment that is gone, is an
// error (upstream L229-231, L132-136).
func TestMissingObjects(t *testing.T) {
	t.Parallel()
	t.Run("control plane", func(t *testing.T) {
		f := newFixture(t)
		f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() {
			f.cluster.Spec.ControlPlaneRef.Name = "missing"
		}, false)).To(Succeed())
		f.agentCluster(withEndpoint(nil), unwatched)
		_, err := f.reconcile()
		f.g.Expect(err).To(MatchError(ContainSubstring(`hostedcontrolplanes.hypershift.openshift.io "missing" not found`)))
		f.g.Expect(f.clusterDeployment()).To(BeNil())
	})
	t.Run("ClusterDeployment", func(t *testing.T) {
		f := newFixture(t)
		ac := f.agentCluster(withEndpoint(nil), unwatched)
		ac.Status.ClusterDeploymentRef = capiagentv1.ClusterDeploymentReference{Namespace: f.ns, Name: "gone"}
		f.g.Expect(env.Client.Status().Update(context.Background(), ac)).To(Succeed())
		_, err := f.reconcile()
		f.g.Expect(err).To(MatchError(ContainSubstring(`"gone" not found`)))
		f.g.Expect(f.getAgentCluster().Status.Ready).To(BeFalse())
	})
}

// Rule 15: the ClusterDeployment and AgentClusterInstall come first;
// status.ready waits for a valid control plane endpoint, host and port
// (the CRD refuses an empty one), and follows it once set.
func TestReady(t *testing.T) {
	f := newFixture(t)
	f.startController()
	f.agentCluster(capiagentv1.AgentClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.hosted.example.com"}})
	f.eventuallyClusterDeployment()
	f.eventuallyAgentClusterInstall()
	f.g.Consistently(func() bool { return f.getAgentCluster().Status.Ready }, quiet).Should(BeFalse(), "a host without a port is not valid")

	ac := &capiagentv1.AgentCluster{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: f.name}, ac, func() { ac.Spec.ControlPlaneEndpoint.Port = 6443 }, false)).To(Succeed())
	f.eventuallyReady()
}

// Rule 15: a ClusterDeployment already labelled agentClusterRef=<name>
// (a restored hub), or one of the AgentCluster's name, is taken as it is,
// then owned and labelled; an existing AgentClusterInstall is left as it
// is (upstream L260-290, L355-356, L365-404).
func TestAdopts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		cdName func(f *fixture) string
		labels func(f *fixture) map[string]string
	}{
		{
			name:   "labelled, another name",
			cdName: func(*fixture) string { return "restored" },
			labels: func(f *fixture) map[string]string { return map[string]string{"agentClusterRef": f.name} },
		},
		{
			name:   "the AgentCluster's name, unlabelled",
			cdName: func(f *fixture) string { return f.name },
			labels: func(*fixture) map[string]string { return nil },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			name := tc.cdName(f)
			existing := &hivev1.ClusterDeployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: tc.labels(f)},
				Spec: hivev1.ClusterDeploymentSpec{
					Installed: true, ClusterName: "before", BaseDomain: "before.example.com",
					Platform: hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
				},
			}
			env.Create(t, existing)
			preset := &hiveextv1.AgentClusterInstall{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
				Spec: hiveextv1.AgentClusterInstallSpec{
					ClusterDeploymentRef:  corev1.LocalObjectReference{Name: name},
					ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: 1},
				},
			}
			env.Create(t, preset)
			f.startController()
			ac := f.agentCluster(withEndpoint(&capiagentv1.IgnitionEndpoint{Url: "https://ignition.example.com/ignition"}))

			f.eventuallyReady()
			f.g.Expect(f.getAgentCluster().Status.ClusterDeploymentRef).To(Equal(capiagentv1.ClusterDeploymentReference{Namespace: f.ns, Name: name}))
			cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
			f.get(cd)
			f.g.Expect(cd.Labels).To(HaveKeyWithValue("agentClusterRef", f.name))
			f.g.Expect(cd.OwnerReferences).To(Equal([]metav1.OwnerReference{ownerRefOf(ac)}))
			f.g.Expect(cd.Spec).To(Equal(existing.Spec), "an adopted ClusterDeployment is not rewritten")
			aci := &hiveextv1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
			f.get(aci)
			f.g.Expect(aci.Spec).To(Equal(preset.Spec), "an existing AgentClusterInstall is not rewritten")
		})
	}
}
