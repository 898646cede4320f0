package webhooks

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/internal/validation"
)

// MinimumDistributionVersion is the oldest OpenShift release the provider
// installs: the first whose assisted installer supports the day-2 and
// control-plane flows the provider relies on.
var MinimumDistributionVersion = semver.MustParse("4.14.0")

// +kubebuilder:webhook:verbs=create;update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha3-openshiftassistedcontrolplane,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,versions=v1alpha3,name=validation.openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ControlPlane validates OpenshiftAssistedControlPlanes.
type ControlPlane struct{}

var _ admission.Validator[*controlplanev1.OpenshiftAssistedControlPlane] = (*ControlPlane)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *ControlPlane) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &controlplanev1.OpenshiftAssistedControlPlane{}).WithValidator(w).Complete()
}

// ValidateCreate checks every value.
func (w *ControlPlane) ValidateCreate(_ context.Context, cp *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	spec, path := &cp.Spec, field.NewPath("spec")
	errs := validateSpec(spec, path)
	if r := ptr.Deref(spec.Replicas, 3); r == 2 {
		errs = append(errs, field.Invalid(path.Child("replicas"), r,
			"2 control-plane machines cannot keep etcd quorum when one fails: use 1 (single-node OpenShift) or 3 to 5"))
	}
	return nil, invalid(cp.Name, errs)
}

// ValidateUpdate checks every value and what may change.
func (w *ControlPlane) ValidateUpdate(_ context.Context, old, cp *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	path := field.NewPath("spec")
	errs := validateSpec(&cp.Spec, path)
	errs = append(errs, validateReplicasChange(ptr.Deref(old.Spec.Replicas, 3), ptr.Deref(cp.Spec.Replicas, 3), path.Child("replicas"))...)
	errs = append(errs, validateVersionChange(versionFloor(old), cp.Spec.DistributionVersion, path.Child("distributionVersion"))...)
	errs = append(errs, validateFixedConfig(&old.Spec.Config, &cp.Spec.Config, path.Child("config"))...)
	return nil, invalid(cp.Name, errs)
}

// ValidateDelete allows every deletion.
func (w *ControlPlane) ValidateDelete(context.Context, *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	return nil, nil
}

func validateSpec(spec *controlplanev1.OpenshiftAssistedControlPlaneSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseDistributionVersion(spec.DistributionVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("distributionVersion"), spec.DistributionVersion, err.Error()))
	}
	ref := spec.MachineTemplate.Spec.InfrastructureRef
	if !strings.HasSuffix(ref.Kind, clusterv1.TemplateSuffix) {
		errs = append(errs, field.Invalid(path.Child("machineTemplate", "spec", "infrastructureRef", "kind"), ref.Kind,
			"must be an infrastructure machine template kind (ending in \"Template\"), e.g. Metal3MachineTemplate: each control-plane Machine gets a clone of it"))
	}
	errs = append(errs, validateConfig(&spec.Config, ptr.Deref(spec.Replicas, 3), path.Child("config"))...)
	errs = append(errs, validation.ConfigSpec(&spec.OpenshiftAssistedConfigSpec, path.Child("openshiftAssistedConfigSpec"))...)
	return errs
}

var baselineCapability = regexp.MustCompile(`^(None|vCurrent|v4\.[0-9]+)$`)

func validateConfig(c *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec, replicas int32, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(c.BaseDomain) {
		errs = append(errs, field.Invalid(path.Child("baseDomain"), c.BaseDomain, "must be a DNS domain such as example.com: "+msg))
	}
	if c.ClusterName != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(c.ClusterName) {
			errs = append(errs, field.Invalid(path.Child("clusterName"), c.ClusterName,
				"must be a DNS label (lowercase letters, digits and '-'), it becomes part of api.<clusterName>.<baseDomain>: "+msg))
		}
	}
	errs = append(errs, validateVIPs(c, replicas, path)...)
	if ref := c.PullSecretRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(path.Child("pullSecretRef", "name"), "name the Secret holding the pull secret, or remove pullSecretRef"))
	}
	if ref := c.ImageRegistryRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(path.Child("imageRegistryRef", "name"), "name the ConfigMap holding registries.conf and ca-bundle.crt, or remove imageRegistryRef"))
	}
	errs = append(errs, validation.SSHAuthorizedKey(c.SSHAuthorizedKey, path.Child("sshAuthorizedKey"))...)
	errs = append(errs, validation.Proxy(c.Proxy, path.Child("proxy"))...)
	if b := c.Capabilities.BaselineCapability; b != "" && !baselineCapability.MatchString(b) {
		errs = append(errs, field.Invalid(path.Child("capabilities", "baselineCapability"), b, "must be None, vCurrent or v4.<minor> such as v4.16"))
	}
	return errs
}

func validateVIPs(c *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec, replicas int32, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ip := range c.APIVIPs {
		errs = append(errs, validation.IP(ip, path.Child("apiVIPs").Index(i))...)
	}
	for i, ip := range c.IngressVIPs {
		errs = append(errs, validation.IP(ip, path.Child("ingressVIPs").Index(i))...)
	}
	if len(errs) > 0 {
		return errs
	}
	switch {
	case replicas == 1 && len(c.APIVIPs)+len(c.IngressVIPs) > 0:
		errs = append(errs, field.Forbidden(path.Child("apiVIPs"),
			"a single-node cluster (replicas 1) uses its node's address and no VIPs: remove apiVIPs and ingressVIPs, or set replicas to 3 or more"))
	case len(c.APIVIPs) != len(c.IngressVIPs):
		errs = append(errs, field.Invalid(path.Child("ingressVIPs"), c.IngressVIPs,
			fmt.Sprintf("give as many ingressVIPs as apiVIPs (%d, one per IP family), or none of either for a user-managed load balancer", len(c.APIVIPs))))
	}
	for i, api := range c.APIVIPs {
		for _, ingress := range c.IngressVIPs {
			if api == ingress {
				errs = append(errs, field.Invalid(path.Child("apiVIPs").Index(i), api, "the API and ingress VIPs must differ"))
			}
		}
	}
	return errs
}

func validateReplicasChange(old, replicas int32, path *field.Path) field.ErrorList {
	if old == replicas || (old != 1 && replicas != 1) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, replicas,
		fmt.Sprintf("cannot change from %d to %d: a single-node cluster cannot become highly available or back by scaling; create a new cluster", old, replicas))}
}

// versionFloor is the oldest version a control plane may be set to: the
// one its cluster runs once installed, so that a version never applied (a
// release the registry lacks, say) can be taken back; before, the one
// asked for.
func versionFloor(cp *controlplanev1.OpenshiftAssistedControlPlane) string {
	if cp.Status.DistributionVersion != "" {
		return cp.Status.DistributionVersion
	}
	return cp.Spec.DistributionVersion
}

func validateVersionChange(old, version string, path *field.Path) field.ErrorList {
	from, err1 := ParseDistributionVersion(old)
	to, err2 := ParseDistributionVersion(version)
	if err1 != nil || err2 != nil || !to.LT(from) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, version,
		fmt.Sprintf("cannot go back from %s: OpenShift does not support downgrades; set %s or a newer version", old, old))}
}

func validateFixedConfig(old, c *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec, path *field.Path) field.ErrorList {
	const why = "cannot change: the ClusterDeployment and AgentClusterInstall were created from it; create a new cluster instead"
	var errs field.ErrorList
	fixed := []struct {
		name     string
		old, new any
	}{
		{"baseDomain", old.BaseDomain, c.BaseDomain},
		{"clusterName", old.ClusterName, c.ClusterName},
		{"apiVIPs", strings.Join(old.APIVIPs, ","), strings.Join(c.APIVIPs, ",")},
		{"ingressVIPs", strings.Join(old.IngressVIPs, ","), strings.Join(c.IngressVIPs, ",")},
		{"networkType", old.NetworkType, c.NetworkType},
	}
	for _, f := range fixed {
		if f.old != f.new {
			errs = append(errs, field.Forbidden(path.Child(f.name), why))
		}
	}
	return errs
}

// ParseDistributionVersion parses an OpenShift release version (x.y.z with
// an optional pre-release, e.g. 4.17.3 or 4.18.0-rc.2) and checks it is
// supported.
func ParseDistributionVersion(s string) (semver.Version, error) {
	v, err := semver.Parse(strings.TrimPrefix(s, "v"))
	if err != nil {
		return semver.Version{}, fmt.Errorf("must be an OpenShift release version such as 4.17.3 (x.y.z): %v", err)
	}
	base := semver.Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
	if base.LT(MinimumDistributionVersion) {
		return semver.Version{}, fmt.Errorf("OpenShift %s is older than %s, the oldest release this provider installs", s, MinimumDistributionVersion)
	}
	return v, nil
}

func invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane").GroupKind(), name, errs)
}
