package assisted

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// spokeScheme has what the service reads and writes in a workload
// cluster: Kubernetes' own kinds, and its machine API's Machines,
// MachineSets and BareMetalHosts.
var spokeScheme = func() *runtime.Scheme {
	sch := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(sch))
	utilruntime.Must(machinev1beta1.AddToScheme(sch))
	utilruntime.Must(bmov1alpha1.AddToScheme(sch))
	return sch
}()

func (s *Service) spokeClient(ctx context.Context, key ClusterKey) (client.Client, error) {
	if c, ok := s.spokeClients.Load(key); ok {
		return c.(client.Client), nil
	}
	kubeconfig, err := s.spokeKubeconfig(ctx, key)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("workload cluster %s kubeconfig: %w", key, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: spokeScheme})
	if err != nil {
		return nil, err
	}
	s.spokeClients.Store(key, c)
	return c, nil
}

// spokeKubeconfig is a workload cluster's admin kubeconfig: the lab
// cluster's, or for an imported cluster the Secret its ClusterDeployment
// names (clusterMetadata.adminKubeconfigSecretRef, else
// <name>-admin-kubeconfig, key kubeconfig), where upstream's agent
// controller finds it.
func (s *Service) spokeKubeconfig(ctx context.Context, key ClusterKey) ([]byte, error) {
	if spoke := s.opts.Spokes.Get(key); spoke != nil {
		return spoke.AdminKubeconfig(), nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, cd); err != nil {
		return nil, fmt.Errorf("no workload cluster %s: %w", key, err)
	}
	name := cd.Name + "-admin-kubeconfig"
	if met := cd.Spec.ClusterMetadata; met != nil && met.AdminKubeconfigSecretRef.Name != "" {
		name = met.AdminKubeconfigSecretRef.Name
	}
	return s.secretValue(ctx, key.Namespace, name, "kubeconfig", "admin kubeconfig")
}

// labelJoinedNode gives a joined node its role labels and the Agent's node
// labels, which NodeRestriction keeps the node from setting itself.
func (s *Service) labelJoinedNode(ctx context.Context, a *agentv1beta1.Agent) error {
	ref := a.Spec.ClusterDeploymentName
	if ref == nil {
		return nil
	}
	c, err := s.spokeClient(ctx, ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return err
	}
	labels := map[string]string{}
	for k, v := range a.Spec.NodeLabels {
		labels[k] = v
	}
	switch effectiveRole(a) {
	case agentv1beta1.HostRoleMaster:
		labels["node-role.kubernetes.io/master"] = ""
		labels["node-role.kubernetes.io/control-plane"] = ""
	default:
		labels["node-role.kubernetes.io/worker"] = ""
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	node := &corev1.Node{}
	node.Name = hostname(a)
	// The node registered just before it reported Joined; allow for the
	// API server's view to catch up.
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch))
		return err == nil, client.IgnoreNotFound(err)
	})
}

// The kubelet settings a bootstrap provider's ignition override gives:
// a provider ID (a URL-like value or a config drive metadata variable,
// $NAME or ${NAME}) and the labels OpenShift's kubelet unit takes from
// CUSTOM_KUBELET_LABELS. Both read whatever file or script writes them.
var (
	providerIDRE    = regexp.MustCompile(`(?:KUBELET_PROVIDERID=|--provider-id=|providerID:\s*)"?([a-zA-Z0-9]+://[^\s"'\\]+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)`)
	kubeletLabelsRE = regexp.MustCompile(`CUSTOM_KUBELET_LABELS=([^\s"']+)`)
)

// kubeletSettings is what an Agent's ignition config overrides set for
// its node's kubelet, metadata variables unresolved: the node resolves
// them from its config drive.
type kubeletSettings struct {
	ProviderID string
	Labels     map[string]string
}

func kubeletSettingsFromOverrides(overrides string) kubeletSettings {
	var out kubeletSettings
	if overrides == "" {
		return out
	}
	var ign struct {
		Storage struct {
			Files []struct {
				Contents struct{ Source string } `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if json.Unmarshal([]byte(overrides), &ign) != nil {
		return out
	}
	for _, f := range ign.Storage.Files {
		data, err := decodeDataURL(f.Contents.Source)
		if err != nil {
			continue
		}
		if m := providerIDRE.FindSubmatch(data); m != nil && out.ProviderID == "" {
			out.ProviderID = string(m[1])
		}
		if m := kubeletLabelsRE.FindSubmatch(data); m != nil && out.Labels == nil {
			out.Labels = map[string]string{}
			for _, l := range strings.Split(string(m[1]), ",") {
				if k, v, ok := strings.Cut(l, "="); ok && k != "" {
					out.Labels[k] = v
				}
			}
		}
	}
	return out
}
