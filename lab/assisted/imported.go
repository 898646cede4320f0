package assisted

import (
	"context"
	"fmt"
	"net/url"
	"path"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// An imported cluster is one the service did not install: its
// ClusterDeployment says installed before the service first saw its
// install (cluster-api-provider-agent imports a HyperShift hosted cluster
// so). Upstream (clusterdeployments_controller.go createNewDay2Cluster)
// registers it as an add-hosts cluster, in state adding-hosts, with no
// release required and no kubeconfig read at import.
const importedStateInfo = "cluster is adding hosts to existing OCP cluster"

// importOnFirstSight puts an imported cluster in adding-hosts; it says
// whether it did.
func importOnFirstSight(in *install) bool {
	if in.aci.Status.DebugInfo.State != "" || !in.cd.Spec.Installed {
		return false
	}
	setState(in.aci, hiveextv1beta1.ClusterStateAddingHosts, importedStateInfo)
	return true
}

// Secret keys assisted-service reads for an ignition endpoint.
const (
	// ignitionTokenKey holds an Agent's token for the endpoint
	// (ignitionEndpointTokenReference).
	ignitionTokenKey = "ignition-token"
	// ignitionCAKey holds the endpoint's CA (caCertificateReference).
	ignitionCAKey = corev1.TLSCertKey
)

// pointerInstallArgs are a day-2 host's install arguments for a cluster
// with an ignition endpoint: the node config the host writes carries no
// credentials, only the pointer Ignition to fetch them through, which
// upstream builds in FormatSecondDayWorkerIgnitionFile.
func (s *Service) pointerInstallArgs(ctx context.Context, in *install, a *agentv1beta1.Agent) (agentapi.InstallArgs, error) {
	pointer, err := s.pointerIgnition(ctx, in.aci.Spec.IgnitionEndpoint, a)
	if err != nil {
		return agentapi.InstallArgs{}, err
	}
	args, err := s.diskInstallArgs(ctx, in, a)
	if err != nil {
		return agentapi.InstallArgs{}, err
	}
	args.Node = agentapi.NodeConfig{Name: hostname(a), Report: args.Node.Report, PointerIgnition: pointer}
	return args, nil
}

// pointerIgnition is the pointer a day-2 host gets: the endpoint's URL
// joined with the host's machine config pool (else its role), the bearer
// token of the Agent's token Secret and its extra headers, and the CA of
// the endpoint's CA Secret (upstream GetIgnitionEndpointAndCert and
// FormatSecondDayWorkerIgnitionFile).
func (s *Service) pointerIgnition(ctx context.Context, ep *hiveextv1beta1.IgnitionEndpoint, a *agentv1beta1.Agent) ([]byte, error) {
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ignition endpoint URL %q is not an absolute URL", ep.URL)
	}
	u.Path = path.Join(u.Path, ignitionPool(a))
	headers := map[string]string{}
	for k, v := range a.Spec.IgnitionEndpointHTTPHeaders {
		headers[k] = v
	}
	token, err := s.ignitionToken(ctx, a)
	if err != nil {
		return nil, err
	}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	var ca []byte
	if ref := ep.CaCertificateReference; ref != nil {
		if ca, err = s.secretValue(ctx, ref.Namespace, ref.Name, ignitionCAKey, "CA"); err != nil {
			return nil, err
		}
	}
	return agentapi.NewPointerIgnition(u.String(), headers, ca)
}

// ignitionPool is the pool a day-2 host's ignition is for: its machine
// config pool, else its role (auto-assign installs as a worker).
func ignitionPool(a *agentv1beta1.Agent) string {
	if a.Spec.MachineConfigPool != "" {
		return a.Spec.MachineConfigPool
	}
	if role := effectiveRole(a); role != agentv1beta1.HostRoleAutoAssign {
		return string(role)
	}
	return string(agentv1beta1.HostRoleWorker)
}

// ignitionToken reads the Agent's ignition endpoint token; an Agent
// without a token reference has none.
func (s *Service) ignitionToken(ctx context.Context, a *agentv1beta1.Agent) (string, error) {
	ref := a.Spec.IgnitionEndpointTokenReference
	if ref == nil {
		return "", nil
	}
	tok, err := s.secretValue(ctx, ref.Namespace, ref.Name, ignitionTokenKey, "ignition token")
	return string(tok), err
}

// secretValue reads one key of a Secret, straight from the API server
// (the service caches no Secrets).
func (s *Service) secretValue(ctx context.Context, ns, name, key, what string) ([]byte, error) {
	sec := &corev1.Secret{}
	if err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
		return nil, fmt.Errorf("%s Secret %s/%s: %w", what, ns, name, err)
	}
	v, ok := sec.Data[key]
	if !ok {
		return nil, fmt.Errorf("%s Secret %s/%s is missing the %s key", what, ns, name, key)
	}
	return v, nil
}

// syncIgnitionToken reports an Agent whose ignition token cannot be read
// as upstream's agent controller does (updateHostIgnitionEndpointToken's
// error, a backend one): SpecSynced False. Its install cannot start.
func (s *Service) syncIgnitionToken(ctx context.Context, a *agentv1beta1.Agent) {
	if _, err := s.ignitionToken(ctx, a); err != nil {
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{
			Type: agentv1beta1.ConditionSpecSynced, Status: corev1.ConditionFalse, Reason: agentv1beta1.ReasonBackendError,
			Message: "The Spec could not be synced due to backend error: " + err.Error(),
		})
	}
}
