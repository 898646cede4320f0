package disconnected

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/pki"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

// operatorNamespace is where the infrastructure operator runs and reads
// its AgentServiceConfig's ConfigMaps (the lab's assisted service's
// default namespace).
const operatorNamespace = "multicluster-engine"

// hubMirrorConfig is the ConfigMap the AgentServiceConfig names.
const hubMirrorConfig = "mirror-registry-config"

// mirrorConfigMap is a mirror registry ConfigMap as both assisted-service
// and CAPOA read one: the site's registries.conf and the mirror's CA.
func mirrorConfigMap(in scenarios.Input, namespace, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data: map[string]string{assisted.RegistriesConfKey: site(in).RegistriesConf, assisted.MirrorCAKey: mirrorCA()}}
}

// mirrorCA stands for the CA of a mirror registry: the lab's mirror
// speaks plain HTTP (insecure in the registries.conf), but a site's
// configuration carries its CA all the same, and where it ends up is
// observed.
func mirrorCA() string {
	ca, err := pki.NewCA("mirror-registry-ca")
	Expect(err).NotTo(HaveOccurred())
	return string(pki.CertPEM(ca.Cert))
}

// configureHubMirrors makes the hub a disconnected hub, as its admin
// does: AgentServiceConfig "agent" names a ConfigMap of the site's
// mirrors in the operator's namespace. It is taken away when the spec
// ends.
func configureHubMirrors(ctx context.Context, in scenarios.Input) {
	hub := in.Lab.Client()
	By("configuring the hub's mirrors: AgentServiceConfig agent spec.mirrorRegistryRef -> ConfigMap " + operatorNamespace + "/" + hubMirrorConfig)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	cm := mirrorConfigMap(in, operatorNamespace, hubMirrorConfig)
	asc := &agentv1beta1.AgentServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: agentv1beta1.AgentServiceConfigName},
		Spec: agentv1beta1.AgentServiceConfigSpec{MirrorRegistryRef: &corev1.LocalObjectReference{Name: hubMirrorConfig}}}
	for _, o := range []client.Object{cm, asc} {
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	DeferCleanup(removeHubMirrors, in)
}

// removeHubMirrors takes the hub's mirrors away (none is no error).
func removeHubMirrors(ctx context.Context, in scenarios.Input) {
	hub := in.Lab.Client()
	for _, o := range []client.Object{
		&agentv1beta1.AgentServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: agentv1beta1.AgentServiceConfigName}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: hubMirrorConfig}},
	} {
		Expect(client.IgnoreNotFound(hub.Delete(ctx, o))).To(Succeed())
	}
}
