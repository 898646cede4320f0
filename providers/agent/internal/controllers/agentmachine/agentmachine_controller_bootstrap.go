package agentmachine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// The token Secret the provider writes for a Machine's bootstrap data
// (upstream L574-586).
const (
	// tokenSecretPrefix prefixes the data Secret's name.
	tokenSecretPrefix = "agent-"
	// tokenSecretKey holds the bearer token.
	tokenSecretKey = "ignition-token"
	// bearerPrefix must start the Authorization header's value.
	bearerPrefix = "Bearer "
	// authorizationHeader is the header carrying the token; the match is
	// exact, as upstream's (L561).
	authorizationHeader = "Authorization"
)

// bootstrapData is what a Machine's bootstrap data tells its Agent about
// fetching the Ignition. The zero value (a Machine without data) sets
// nothing.
type bootstrapData struct {
	machineConfigPool string
	tokenRef          *agentv1.IgnitionEndpointTokenReference
	headers           map[string]string
}

// applyTo writes the data into an Agent's spec.
func (d *bootstrapData) applyTo(spec *agentv1.AgentSpec) {
	spec.MachineConfigPool = d.machineConfigPool
	spec.IgnitionEndpointTokenReference = d.tokenRef
	spec.IgnitionEndpointHTTPHeaders = d.headers
}

// reconcileBootstrapData reads the Machine's bootstrap data Secret (rule 9,
// upstream L522-602): its "value" is an Ignition config whose single merge
// source is the Ignition endpoint. The last path segment of the source is
// the machine config pool; the Authorization header's bearer token goes to
// the Secret agent-<data Secret>, which it creates or updates; the other
// headers are passed on as they are. The data Secret gets the backup
// label.
func (r *Reconciler) reconcileBootstrapData(ctx context.Context, s *scope) (*bootstrapData, error) {
	log := ctrl.LoggerFrom(ctx)
	name := s.machine.Spec.Bootstrap.DataSecretName
	if name == nil {
		log.V(4).Info("The Machine has no bootstrap data Secret yet")
		return &bootstrapData{}, nil
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.machine.Namespace, Name: *name}, secret); err != nil {
		return nil, fmt.Errorf("get bootstrap data Secret %s: %w", *name, err)
	}
	if err := r.labelForBackup(ctx, secret); err != nil {
		// Upstream only warns (L540-542).
		log.Error(err, "Label the bootstrap data Secret for backup", "Secret", klog.KObj(secret))
	}
	source, err := mergeSource(secret.Data["value"])
	if err != nil {
		return nil, fmt.Errorf("read bootstrap data Secret %s: %w", *name, err)
	}
	data := &bootstrapData{headers: map[string]string{}}
	data.machineConfigPool = source.url[strings.LastIndex(source.url, "/")+1:]
	token := ""
	for _, h := range source.headers {
		if h.name != authorizationHeader {
			data.headers[h.name] = h.value
			continue
		}
		t, ok := strings.CutPrefix(h.value, bearerPrefix)
		if !ok {
			return nil, fmt.Errorf("read bootstrap data Secret %s: the %s header lacks the %q prefix", *name, authorizationHeader, bearerPrefix)
		}
		token = t
	}
	data.tokenRef, err = r.writeTokenSecret(ctx, s.machine.Namespace, tokenSecretPrefix+*name, token)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// labelForBackup adds the backup label to a Secret that lacks it
// (upstream common.go L40-53).
func (r *Reconciler) labelForBackup(ctx context.Context, secret *corev1.Secret) error {
	if metav1.HasLabel(secret.ObjectMeta, capiagentv1.BackupLabel) {
		return nil
	}
	metav1.SetMetaDataLabel(&secret.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
	if err := r.Client.Update(ctx, secret); err != nil {
		return fmt.Errorf("label Secret %s for backup: %w", secret.Name, err)
	}
	return nil
}

// writeTokenSecret creates or updates the token Secret, labelled for
// assisted-service to watch and for backup (upstream L574-599). Upstream
// replaces the whole Secret; this keeps labels and annotations others put
// on it and sets the two labels and the data.
func (r *Reconciler) writeTokenSecret(ctx context.Context, namespace, name, token string) (*agentv1.IgnitionEndpointTokenReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, secret, func() error {
		metav1.SetMetaDataLabel(&secret.ObjectMeta, agentv1.WatchResourceLabel, "true")
		metav1.SetMetaDataLabel(&secret.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
		secret.Data = map[string][]byte{tokenSecretKey: []byte(token)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write ignition token Secret %s: %w", name, err)
	}
	return &agentv1.IgnitionEndpointTokenReference{Namespace: namespace, Name: name}, nil
}

// ignitionSource is the one config merge source of a bootstrap Ignition.
type ignitionSource struct {
	url     string
	headers []ignitionHeader
}

type ignitionHeader struct{ name, value string }

// mergeSource decodes the Ignition config fields upstream reads (its
// coreos/ignition v3.1 types, L544-556) and returns the single merge
// source. Upstream dereferences a missing source or header value and
// panics; here a missing source is an error and a missing value is empty.
func mergeSource(raw []byte) (*ignitionSource, error) {
	var cfg struct {
		Ignition struct {
			Config struct {
				Merge []struct {
					Source      *string `json:"source"`
					HTTPHeaders []struct {
						Name  string  `json:"name"`
						Value *string `json:"value"`
					} `json:"httpHeaders"`
				} `json:"merge"`
			} `json:"config"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("decode the Ignition config: %w", err)
	}
	merge := cfg.Ignition.Config.Merge
	if len(merge) != 1 {
		return nil, fmt.Errorf("want one Ignition config merge source, found %d", len(merge))
	}
	if merge[0].Source == nil {
		return nil, errors.New("the Ignition config merge source has no URL")
	}
	out := &ignitionSource{url: *merge[0].Source}
	for _, h := range merge[0].HTTPHeaders {
		v := ""
		if h.Value != nil {
			v = *h.Value
		}
		out.headers = append(out.headers, ignitionHeader{name: h.Name, value: v})
	}
	return out, nil
}
