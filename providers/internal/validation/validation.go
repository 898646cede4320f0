package validation

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/metadataref"
)

// ConfigSpec validates an OpenshiftAssistedConfigSpec at path.
func ConfigSpec(spec *bootstrapv1.OpenshiftAssistedConfigSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref := spec.PullSecretRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(path.Child("pullSecretRef", "name"),
			"name the Secret holding the pull secret, or remove pullSecretRef to use the cluster's"))
	}
	errs = append(errs, SSHAuthorizedKey(spec.SSHAuthorizedKey, path.Child("sshAuthorizedKey"))...)
	for i, s := range spec.AdditionalNTPSources {
		errs = append(errs, HostOrIP(s, path.Child("additionalNTPSources").Index(i))...)
	}
	errs = append(errs, Proxy(spec.Proxy, path.Child("proxy"))...)
	if _, err := metav1.LabelSelectorAsSelector(&spec.NMStateConfigLabelSelector); err != nil {
		errs = append(errs, field.Invalid(path.Child("nmStateConfigLabelSelector"), spec.NMStateConfigLabelSelector, err.Error()))
	}
	errs = append(errs, TrustBundle(spec.AdditionalTrustBundle, path.Child("additionalTrustBundle"))...)
	errs = append(errs, nodeRegistration(&spec.NodeRegistration, path.Child("nodeRegistration"))...)
	return errs
}

func nodeRegistration(n *bootstrapv1.NodeRegistrationOptions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), n.Name,
				"must be a valid host name (lowercase letters, digits, '-' and '.'): "+msg))
		}
	}
	for i, l := range n.KubeletExtraLabels {
		errs = append(errs, nodeLabel(l, path.Child("kubeletExtraLabels").Index(i))...)
	}
	if id := n.ProviderID; id != "" {
		if _, ref, err := metadataref.Parse(id); err != nil {
			errs = append(errs, field.Invalid(path.Child("providerID"), id, err.Error()))
		} else if scheme, rest, ok := strings.Cut(id, "://"); !ref && (!ok || scheme == "" || rest == "") {
			errs = append(errs, field.Invalid(path.Child("providerID"), id,
				"must have the form <provider>://<id>, e.g. metal3://namespace/host/machine, or name a config drive metadata variable, e.g. $METADATA_UUID"))
		}
	}
	return errs
}

func nodeLabel(l string, path *field.Path) field.ErrorList {
	key, value, ok := strings.Cut(l, "=")
	if !ok {
		return field.ErrorList{field.Invalid(path, l,
			`must be "key=value" (the value may be empty), e.g. "node-role.kubernetes.io/infra="`)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(path, l, fmt.Sprintf("label key %q: %s", key, msg)))
	}
	if _, ref, err := metadataref.Parse(value); err != nil {
		return append(errs, field.Invalid(path, l, fmt.Sprintf("label value %s", err)))
	} else if ref {
		return errs
	}
	for _, msg := range validation.IsValidLabelValue(value) {
		errs = append(errs, field.Invalid(path, l, fmt.Sprintf("label value %q: %s", value, msg)))
	}
	return errs
}

// SSHAuthorizedKey checks that every non-empty line is an SSH public key.
func SSHAuthorizedKey(keys string, path *field.Path) field.ErrorList {
	for i, line := range strings.Split(keys, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err != nil {
			return field.ErrorList{field.Invalid(path, elide(line),
				fmt.Sprintf("line %d is not an SSH public key (%v): paste the contents of a public key file such as ~/.ssh/id_ed25519.pub, one key per line", i+1, err))}
		}
	}
	return nil
}

// HostOrIP checks a host name or IP address.
func HostOrIP(s string, path *field.Path) field.ErrorList {
	if net.ParseIP(s) != nil || len(validation.IsDNS1123Subdomain(strings.ToLower(s))) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, s, "must be a host name or an IP address, e.g. ntp.example.com or 192.0.2.10")}
}

// IP checks an IP address.
func IP(s string, path *field.Path) field.ErrorList {
	if net.ParseIP(s) != nil {
		return nil
	}
	return field.ErrorList{field.Invalid(path, s, "must be an IPv4 or IPv6 address, e.g. 192.0.2.5")}
}

// Proxy checks proxy URLs: httpProxy must be http://, httpsProxy http:// or
// https://, as OpenShift requires.
func Proxy(p *bootstrapv1.Proxy, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, proxyURL(p.HTTPProxy, path.Child("httpProxy"), "http")...)
	errs = append(errs, proxyURL(p.HTTPSProxy, path.Child("httpsProxy"), "http", "https")...)
	if strings.ContainsAny(p.NoProxy, " \t") {
		errs = append(errs, field.Invalid(path.Child("noProxy"), p.NoProxy,
			"must be a comma-separated list without spaces, e.g. .cluster.local,10.0.0.0/16"))
	}
	return errs
}

func proxyURL(s string, path *field.Path, schemes ...string) field.ErrorList {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err == nil && u.Host != "" {
		for _, scheme := range schemes {
			if u.Scheme == scheme {
				return nil
			}
		}
	}
	return field.ErrorList{field.Invalid(path, s,
		fmt.Sprintf("must be a URL with scheme %s and a host, e.g. %s://proxy.example.com:3128", strings.Join(schemes, " or "), schemes[0]))}
}

// TrustBundle checks that a bundle is PEM certificates.
func TrustBundle(bundle string, path *field.Path) field.ErrorList {
	if strings.TrimSpace(bundle) == "" {
		return nil
	}
	rest, n := []byte(bundle), 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(path, "<bundle>",
				fmt.Sprintf("PEM block %d is a %q, not a CERTIFICATE: the bundle may hold certificates only", n+1, block.Type))}
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return field.ErrorList{field.Invalid(path, "<bundle>", fmt.Sprintf("certificate %d does not parse: %v", n+1, err))}
		}
		n++
	}
	if n == 0 || strings.TrimSpace(string(rest)) != "" {
		return field.ErrorList{field.Invalid(path, "<bundle>",
			"must be PEM-encoded certificates (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----) and nothing else")}
	}
	return nil
}

// LabelSelector checks a label selector.
func LabelSelector(s *metav1.LabelSelector, path *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, path)
}

func elide(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
