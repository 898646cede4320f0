package hypershift

import (
	"testing"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// The HostedControlPlane names the control-plane namespace's copies of
// the HostedCluster's Secrets, and sees the agent platform as None with
// its agent settings kept (reconcileHostedControlPlane).
func TestHostedControlPlaneSpec(t *testing.T) {
	hc := &hypershiftv1beta1.HostedCluster{Spec: hypershiftv1beta1.HostedClusterSpec{
		Release:               hypershiftv1beta1.Release{Image: "registry.example/release@sha256:1"},
		ControlPlaneRelease:   &hypershiftv1beta1.Release{Image: "registry.example/cp@sha256:2"},
		PullSecret:            corev1.LocalObjectReference{Name: "hc1-pull-secret"},
		SSHKey:                corev1.LocalObjectReference{Name: "hc1-ssh-key"},
		AdditionalTrustBundle: &corev1.LocalObjectReference{Name: "hc1-ca"},
		InfraID:               "hc1-abcde", ClusterID: "id", IssuerURL: "https://kubernetes.default.svc",
		Platform: hypershiftv1beta1.PlatformSpec{Type: hypershiftv1beta1.AgentPlatform,
			Agent: &hypershiftv1beta1.AgentPlatformSpec{AgentNamespace: "hardware"}},
	}}
	spec := hostedControlPlaneSpec(hc)
	if spec.ReleaseImage != hc.Spec.Release.Image || spec.ControlPlaneReleaseImage == nil || *spec.ControlPlaneReleaseImage != "registry.example/cp@sha256:2" {
		t.Errorf("release %q, control-plane release %v", spec.ReleaseImage, spec.ControlPlaneReleaseImage)
	}
	if spec.PullSecret.Name != "pull-secret" || spec.SSHKey.Name != "ssh-key" || spec.AdditionalTrustBundle == nil || spec.AdditionalTrustBundle.Name != "user-ca-bundle" {
		t.Errorf("Secrets: pull %q ssh %q trust bundle %v", spec.PullSecret.Name, spec.SSHKey.Name, spec.AdditionalTrustBundle)
	}
	if spec.Platform.Type != hypershiftv1beta1.NonePlatform || spec.Platform.Agent == nil || spec.Platform.Agent.AgentNamespace != "hardware" {
		t.Errorf("platform %+v, want None with the agent settings", spec.Platform)
	}
	if hc.Spec.Platform.Type != hypershiftv1beta1.AgentPlatform {
		t.Error("the HostedCluster's own platform changed")
	}
	if spec.InfraID != "hc1-abcde" || spec.ClusterID != "id" || spec.IssuerURL != hc.Spec.IssuerURL {
		t.Errorf("IDs %q %q issuer %q", spec.InfraID, spec.ClusterID, spec.IssuerURL)
	}
	hc.Spec.SSHKey.Name = ""
	if got := hostedControlPlaneSpec(hc).SSHKey.Name; got != "" {
		t.Errorf("ssh key %q for a HostedCluster without one", got)
	}
}
