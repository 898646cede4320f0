package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
)

const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example"

// invalidSpecs are specs the API server must refuse, with the words the
// message must contain: the field and what a valid value looks like.
var invalidSpecs = []struct {
	name    string
	spec    bootstrapv1.OpenshiftAssistedConfigSpec
	message []string
}{
	{"SSH key that is not one", bootstrapv1.OpenshiftAssistedConfigSpec{SSHAuthorizedKey: "my-password"},
		[]string{"sshAuthorizedKey", "is not an SSH public key", "~/.ssh/id_ed25519.pub"}},
	{"NTP source that is no host", bootstrapv1.OpenshiftAssistedConfigSpec{AdditionalNTPSources: []string{"ntp server!"}},
		[]string{"additionalNTPSources[0]", "must be a host name or an IP address"}},
	{"HTTPS URL as httpProxy", bootstrapv1.OpenshiftAssistedConfigSpec{Proxy: &bootstrapv1.Proxy{HTTPProxy: "https://proxy.example.com:3128"}},
		[]string{"proxy.httpProxy", "must be a URL with scheme http", "http://proxy.example.com:3128"}},
	{"noProxy with spaces", bootstrapv1.OpenshiftAssistedConfigSpec{Proxy: &bootstrapv1.Proxy{NoProxy: "a.example.com, b.example.com"}},
		[]string{"proxy.noProxy", "without spaces"}},
	{"kubelet label without =", bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"infra"}}},
		[]string{"nodeRegistration.kubeletExtraLabels[0]", `must be "key=value"`}},
	{"kubelet label with a bad key", bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"bad key=x"}}},
		[]string{"nodeRegistration.kubeletExtraLabels[0]", `label key "bad key"`}},
	{"provider ID without scheme", bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{ProviderID: "host-0"}},
		[]string{"nodeRegistration.providerID", "<provider>://<id>"}},
	{"host name with capitals", bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "Worker_0"}},
		[]string{"nodeRegistration.name", "must be a valid host name"}},
	{"trust bundle that is not PEM", bootstrapv1.OpenshiftAssistedConfigSpec{AdditionalTrustBundle: "not a certificate"},
		[]string{"additionalTrustBundle", "must be PEM-encoded certificates"}},
	{"unknown CPU architecture (schema)", bootstrapv1.OpenshiftAssistedConfigSpec{CPUArchitecture: "sparc"},
		[]string{"cpuArchitecture", `supported values: "x86_64", "aarch64"`}},
	{"empty pull secret reference", bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{}},
		[]string{"pullSecretRef.name", "name the Secret holding the pull secret"}},
}

func TestConfigInvalidSpecsRejected(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range invalidSpecs {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-", Namespace: ns}, Spec: tc.spec}
			err := env.Client.Create(context.Background(), c)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestConfigTemplateInvalidSpecsRejected(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range invalidSpecs {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "t-", Namespace: ns},
				Spec:       bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{Spec: tc.spec}},
			}
			err := env.Client.Create(context.Background(), tpl)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.template.spec."))
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func validSpec() bootstrapv1.OpenshiftAssistedConfigSpec {
	return bootstrapv1.OpenshiftAssistedConfigSpec{
		PullSecretRef:        &corev1.LocalObjectReference{Name: "pull-secret"},
		SSHAuthorizedKey:     sshKey + "\n# a comment\n",
		AdditionalNTPSources: []string{"ntp.example.com", "192.0.2.1"},
		Proxy:                &bootstrapv1.Proxy{HTTPProxy: "http://proxy.example.com:3128", HTTPSProxy: "https://proxy.example.com:3129", NoProxy: ".example.com,10.0.0.0/8"},
		KernelArguments:      []bootstrapv1.KernelArgument{{Operation: "append", Value: "console=ttyS0,115200"}},
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "worker-0.example.com", KubeletExtraLabels: []string{"node-role.kubernetes.io/infra=", "rack=r1"}, ProviderID: "metal3://ns/h/m",
		},
	}
}

func TestConfigValidSpecAccepted(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "ok", Namespace: ns}, Spec: validSpec()}
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	g.Expect(c.Spec.CPUArchitecture).To(Equal("x86_64"), "defaulted by the schema")
}

func TestConfigSpecImmutable(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		change  func(c *bootstrapv1.OpenshiftAssistedConfig)
		allowed bool
		field   string
	}{
		{name: "SSH key", change: func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Spec.SSHAuthorizedKey = "" }, field: "spec.sshAuthorizedKey"},
		{name: "proxy", change: func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Spec.Proxy.NoProxy = ".other.example.com" }, field: "spec.proxy.noProxy"},
		{name: "kubelet labels", change: func(c *bootstrapv1.OpenshiftAssistedConfig) {
			c.Spec.NodeRegistration.KubeletExtraLabels = append(c.Spec.NodeRegistration.KubeletExtraLabels, "zone=a")
		}, field: "spec.nodeRegistration.kubeletExtraLabels"},
		{name: "labels and annotations", allowed: true, change: func(c *bootstrapv1.OpenshiftAssistedConfig) {
			c.Labels = map[string]string{"team": "metal"}
			c.Annotations = map[string]string{"note": "x"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-", Namespace: ns}, Spec: validSpec()}
			g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
			tc.change(c)
			err := env.Client.Update(context.Background(), c)
			if tc.allowed {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.field + ": Forbidden: the spec of an OpenshiftAssistedConfig is immutable"))
			g.Expect(err.Error()).To(ContainSubstring("change the OpenshiftAssistedConfigTemplate"), "the message says what to do instead")
		})
	}
}

func TestConfigTemplateMayChange(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	tpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: ns},
		Spec:       bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{Spec: validSpec()}},
	}
	g.Expect(env.Client.Create(context.Background(), tpl)).To(Succeed())
	tpl.Spec.Template.Spec.SSHAuthorizedKey = ""
	g.Expect(env.Client.Update(context.Background(), tpl)).To(Succeed())
	tpl.Spec.Template.Spec.SSHAuthorizedKey = "nope"
	err := env.Client.Update(context.Background(), tpl)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.sshAuthorizedKey")))
}

func TestOSImageVersionWarns(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	rec := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = rec
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "os", Namespace: ns},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{OSImageVersion: "4.17"}}
	g.Expect(c.Create(context.Background(), oac)).To(Succeed(), "a warning, not a refusal")
	g.Expect(rec.texts).To(ContainElement(ContainSubstring("spec.osImageVersion is ignored")))
}

type warnings struct{ texts []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) { w.texts = append(w.texts, text) }
