package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
)

func valid() *controlplanev1.OpenshiftAssistedControlPlane {
	return &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "cp-"},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.17.3",
			Replicas:            ptr.To[int32](3),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "cp"},
				},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain: "example.com", ClusterName: "hub-1",
				APIVIPs: []string{"192.0.2.5"}, IngressVIPs: []string{"192.0.2.6"},
			},
		},
	}
}

func TestInvalidSpecsRejected(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		change  func(*controlplanev1.OpenshiftAssistedControlPlane)
		message []string
	}{
		{"version without patch", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.17" },
			[]string{"spec.distributionVersion", "must be an OpenShift release version such as 4.17.3"}},
		{"version too old", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.12.40" },
			[]string{"spec.distributionVersion", "OpenShift 4.12.40 is older than 4.14.0"}},
		{"two control-plane replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](2) },
			[]string{"spec.replicas", "cannot keep etcd quorum", "use 1 (single-node OpenShift) or 3 to 5"}},
		{"six replicas (schema)", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](6) },
			[]string{"spec.replicas", "should be less than or equal to 5"}},
		{"infrastructure reference to a machine, not a template", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "Metal3Machine"
		}, []string{"spec.machineTemplate.spec.infrastructureRef.kind", `ending in "Template"`, "Metal3MachineTemplate"}},
		{"base domain with a space", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.BaseDomain = "example .com" },
			[]string{"spec.config.baseDomain", "must be a DNS domain such as example.com"}},
		{"cluster name with a dot", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.ClusterName = "hub.1" },
			[]string{"spec.config.clusterName", "must be a DNS label"}},
		{"VIP that is no address", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"api.example.com"}
		},
			[]string{"spec.config.apiVIPs[0]", "must be an IPv4 or IPv6 address"}},
		{"more API than ingress VIPs", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.0.2.5", "2001:db8::5"}
		}, []string{"spec.config.ingressVIPs", "give as many ingressVIPs as apiVIPs (2, one per IP family)"}},
		{"the same VIP for API and ingress", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.IngressVIPs = []string{"192.0.2.5"}
		},
			[]string{"spec.config.apiVIPs[0]", "the API and ingress VIPs must differ"}},
		{"single node with VIPs", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](1) },
			[]string{"spec.config.apiVIPs", "a single-node cluster (replicas 1) uses its node's address and no VIPs"}},
		{"unknown baseline capability", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.Capabilities.BaselineCapability = "all"
		},
			[]string{"spec.config.capabilities.baselineCapability", "must be None, vCurrent or v4.<minor>"}},
		{"bad SSH key", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.SSHAuthorizedKey = "AAAA" },
			[]string{"spec.config.sshAuthorizedKey", "is not an SSH public key"}},
		{"bad proxy", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.Proxy = &bootstrapv1.Proxy{HTTPSProxy: "proxy.example.com:3128"}
		}, []string{"spec.config.proxy.httpsProxy", "must be a URL with scheme http or https"}},
		{"empty image registry reference", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{}
		}, []string{"spec.config.imageRegistryRef.name", "registries.conf"}},
		{"bad bootstrap config spec", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels = []string{"oops"}
		}, []string{"spec.openshiftAssistedConfigSpec.nodeRegistration.kubeletExtraLabels[0]", `must be "key=value"`}},
		{"missing base domain (schema)", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.BaseDomain = "" },
			[]string{"spec.config.baseDomain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cp := valid()
			cp.Namespace = ns
			tc.change(cp)
			err := env.Client.Create(context.Background(), cp)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestValidSpecsAccepted(t *testing.T) {
	ns := env.Namespace(t)
	for name, change := range map[string]func(*controlplanev1.OpenshiftAssistedControlPlane){
		"highly available": func(*controlplanev1.OpenshiftAssistedControlPlane) {},
		"single node without VIP": func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas, cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = ptr.To[int32](1), nil, nil
		},
		"dual stack": func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = []string{"192.0.2.5", "2001:db8::5"}, []string{"192.0.2.6", "2001:db8::6"}
		},
		"release candidate":  func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.19.0-rc.2" },
		"replicas defaulted": func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = nil },
	} {
		t.Run(name, func(t *testing.T) {
			cp := valid()
			cp.Namespace = ns
			change(cp)
			NewWithT(t).Expect(env.Client.Create(context.Background(), cp)).To(Succeed())
		})
	}
}

func TestUpdates(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		create  func(*controlplanev1.OpenshiftAssistedControlPlane)
		change  func(*controlplanev1.OpenshiftAssistedControlPlane)
		message []string // empty: allowed
	}{
		{name: "upgrade", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.18.1" }},
		{name: "scale 3 to 5", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](5) }},
		{name: "new infrastructure template", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.MachineTemplate.Spec.InfrastructureRef.Name = "cp-v2"
		}},
		{name: "downgrade", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.16.9" },
			message: []string{"spec.distributionVersion", "cannot go back from 4.17.3", "OpenShift does not support downgrades"}},
		{name: "highly available to single node", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas, cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = ptr.To[int32](1), nil, nil
		}, message: []string{"spec.replicas", "cannot change from 3 to 1", "create a new cluster"}},
		{name: "single node to highly available", create: func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas, cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = ptr.To[int32](1), nil, nil
		}, change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](3) },
			message: []string{"spec.replicas", "cannot change from 1 to 3"}},
		{name: "base domain", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.BaseDomain = "example.org" },
			message: []string{"spec.config.baseDomain: Forbidden", "the ClusterDeployment and AgentClusterInstall were created from it"}},
		{name: "VIPs", change: func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.APIVIPs = []string{"192.0.2.9"} },
			message: []string{"spec.config.apiVIPs: Forbidden"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cp := valid()
			cp.Namespace = ns
			if tc.create != nil {
				tc.create(cp)
			}
			g.Expect(env.Client.Create(context.Background(), cp)).To(Succeed())
			tc.change(cp)
			err := env.Client.Update(context.Background(), cp)
			if len(tc.message) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

// Once installed, the floor is the version the cluster runs, not the one
// last asked for: a version never applied (one the registry lacks, say)
// can be taken back, down to the installed one and no further.
func TestVersionTakenBackToInstalled(t *testing.T) {
	g := NewWithT(t)
	cp := valid()
	cp.Namespace = env.Namespace(t)
	g.Expect(env.Client.Create(context.Background(), cp)).To(Succeed())
	cp.Status.DistributionVersion = "4.17.3"
	g.Expect(env.Client.Status().Update(context.Background(), cp)).To(Succeed())
	for _, step := range []struct {
		version string
		message string // empty: allowed
	}{
		{version: "4.99.0"},
		{version: "4.17.4"},
		{version: "4.17.3"},
		{version: "4.16.9", message: "cannot go back from 4.17.3"},
	} {
		cp.Spec.DistributionVersion = step.version
		err := env.Client.Update(context.Background(), cp)
		if step.message == "" {
			g.Expect(err).NotTo(HaveOccurred(), "set %s", step.version)
			continue
		}
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(step.message))
	}
}

// The /scale subresource is the contract's way to scale; the webhook does
// not run for it, the schema still bounds it, and the controller keeps etcd
// quorum.
func TestScaleSubresourceBoundedBySchema(t *testing.T) {
	g := NewWithT(t)
	cp := valid()
	cp.Namespace = env.Namespace(t)
	g.Expect(env.Client.Create(context.Background(), cp)).To(Succeed())
	scale := &autoscalingv1.Scale{}
	g.Expect(env.Client.SubResource("scale").Get(context.Background(), cp, scale)).To(Succeed())
	scale.Spec.Replicas = 0
	err := env.Client.SubResource("scale").Update(context.Background(), cp, client.WithSubResourceBody(scale))
	g.Expect(err).To(MatchError(ContainSubstring("spec.replicas")))
}
