package openshiftassistedcontrolplane

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/internal/imageregistry"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// DistributionVersionAnnotation on a ClusterImageSet records the OpenShift
// version its release image is.
const DistributionVersionAnnotation = "controlplane.cluster.x-k8s.io/distribution-version"

// placeholderPullSecret is used when the user gives none: assisted-service
// requires one, OKD and registries without authentication need none.
const placeholderPullSecret = `{"auths":{"fake":{"auth":"aWQ6cGFzcwo="}}}`

// reconcileClusterInstall makes the ClusterImageSet, ClusterDeployment and
// AgentClusterInstall that ask assisted-service to install the cluster.
func (r *Reconciler) reconcileClusterInstall(ctx context.Context, s *scope) (ctrl.Result, error) {
	// The install's state decides what may still change.
	aci := &hiveextv1.AgentClusterInstall{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name}, aci)
	switch {
	case err == nil:
		s.aci = aci
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get AgentClusterInstall: %w", err)
	}
	hasImageSet, err := r.reconcileClusterImageSet(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	pullSecret, err := r.reconcilePullSecret(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileClusterDeployment(ctx, s, pullSecret); err != nil {
		return ctrl.Result{}, err
	}
	if !hasImageSet && s.aci == nil {
		// As CAPOA since ACM-33187: no install of a release the hub could
		// not pin to a digest. KubernetesVersionAvailable says why.
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	if err := r.reconcileRegistryManifests(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.reconcileAgentClusterInstall(ctx, s)
}

// clusterImageSetName is unique among all namespaces: ClusterImageSets are
// cluster-scoped.
func clusterImageSetName(cluster *clusterv1.Cluster) string {
	return cluster.Namespace + "-" + cluster.Name
}

// reconcileClusterImageSet points the ClusterImageSet at the release to
// install, by digest: a tag cannot be redirected by an
// ImageDigestMirrorSet, so a disconnected install of it fails (ACM-33187).
// While the release cannot be read no ClusterImageSet is made, and one
// that exists keeps its release. Once the install has started it changes
// only when an upgrade completes. It says whether the ClusterImageSet
// exists.
func (r *Reconciler) reconcileClusterImageSet(ctx context.Context, s *scope) (bool, error) {
	cis := &hivev1.ClusterImageSet{}
	cis.Name = clusterImageSetName(s.cluster)
	if s.target.Image == "" {
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(cis), cis)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("get ClusterImageSet %s: %w", cis.Name, err)
		}
		return true, nil
	}
	version := s.cp.Spec.DistributionVersion
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, cis, func() error {
		if cis.Labels == nil {
			cis.Labels = map[string]string{}
		}
		cis.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
		if cis.Annotations == nil {
			cis.Annotations = map[string]string{}
		}
		if !cis.CreationTimestamp.IsZero() && installStarted(s.aci) {
			return nil
		}
		cis.Spec.ReleaseImage = s.target.Image
		cis.Annotations[DistributionVersionAnnotation] = version
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("write ClusterImageSet %s: %w", cis.Name, err)
	}
	return true, nil
}

// installStarted says whether assisted-service began installing: from then
// on the install's inputs stay as they were.
func installStarted(aci *hiveextv1.AgentClusterInstall) bool {
	if aci == nil {
		return false
	}
	switch aci.Status.DebugInfo.State {
	case "", hiveextv1.ClusterStateInsufficient, hiveextv1.ClusterStateReady, hiveextv1.ClusterStatePendingForInput:
		return false
	}
	return true
}

// reconcilePullSecret returns the install's pull secret, generating a
// placeholder when the spec names none.
func (r *Reconciler) reconcilePullSecret(ctx context.Context, s *scope) (string, error) {
	if ref := s.cp.Spec.Config.PullSecretRef; ref != nil {
		return ref.Name, nil
	}
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = s.cp.Name+"-pull-secret", s.cp.Namespace
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		if secret.CreationTimestamp.IsZero() {
			secret.Type = corev1.SecretTypeDockerConfigJson
			secret.Data = map[string][]byte{corev1.DockerConfigJsonKey: []byte(placeholderPullSecret)}
			if err := controllerutil.SetControllerReference(s.cp, secret, r.Client.Scheme()); err != nil {
				return err
			}
		}
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("write placeholder pull secret: %w", err)
	}
	return secret.Name, nil
}

// reconcileClusterDeployment creates the hive ClusterDeployment, named
// after the Cluster, on the agent bare-metal platform.
func (r *Reconciler) reconcileClusterDeployment(ctx context.Context, s *scope, pullSecret string) error {
	cd := &hivev1.ClusterDeployment{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name}, cd)
	switch {
	case err == nil:
		if !isControlledByUs(cd, s.cp) {
			return fmt.Errorf("ClusterDeployment %s exists and is not this control plane's", cd.Name)
		}
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get ClusterDeployment: %w", err)
	}
	cd = &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: s.cluster.Name, Namespace: s.cluster.Namespace,
			// As CAPOA labels it: the control plane's Machine labels.
			Labels: mergeLabels(s.cp.Spec.MachineTemplate.ObjectMeta.Labels, machineLabels(s.cp, s.cluster.Name))},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: clusterName(s),
			BaseDomain:  s.cp.Spec.Config.BaseDomain,
			// No agent selector, as CAPOA: each Machine's InfraEnv
			// references the ClusterDeployment, so its Agents come bound.
			Platform:      hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			PullSecretRef: &corev1.LocalObjectReference{Name: pullSecret},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
				Group: hiveextv1.GroupName, Version: hiveextv1.Version, Kind: hiveextv1.AgentClusterInstallKind, Name: s.cluster.Name,
			},
		},
	}
	if err := controllerutil.SetControllerReference(s.cp, cd, r.Client.Scheme()); err != nil {
		return fmt.Errorf("own ClusterDeployment: %w", err)
	}
	if err := r.Client.Create(ctx, cd); err != nil {
		return fmt.Errorf("create ClusterDeployment: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Created ClusterDeployment", "ClusterDeployment", cd.Name)
	return nil
}

func clusterName(s *scope) string {
	if n := s.cp.Spec.Config.ClusterName; n != "" {
		return n
	}
	return s.cluster.Name
}

// reconcileAgentClusterInstall creates the AgentClusterInstall and, until
// the install starts, keeps its agent counts in step with the control
// plane's replicas and the MachineDeployments' workers.
func (r *Reconciler) reconcileAgentClusterInstall(ctx context.Context, s *scope) error {
	workers, err := r.workerCount(ctx, s.cluster)
	if err != nil {
		return err
	}
	aci := &hiveextv1.AgentClusterInstall{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Name}, aci)
	switch {
	case apierrors.IsNotFound(err):
		aci, err = desiredAgentClusterInstall(s, workers)
		if err != nil {
			return err
		}
		if err := controllerutil.SetControllerReference(s.cp, aci, r.Client.Scheme()); err != nil {
			return fmt.Errorf("own AgentClusterInstall: %w", err)
		}
		if err := r.Client.Create(ctx, aci); err != nil {
			return fmt.Errorf("create AgentClusterInstall: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Created AgentClusterInstall", "AgentClusterInstall", aci.Name, "controlPlaneAgents", replicas(s.cp), "workerAgents", workers)
		s.aci = aci
		return nil
	case err != nil:
		return fmt.Errorf("get AgentClusterInstall: %w", err)
	case !isControlledByUs(aci, s.cp):
		return fmt.Errorf("AgentClusterInstall %s exists and is not this control plane's", aci.Name)
	}
	s.aci = aci
	want := hiveextv1.ProvisionRequirements{ControlPlaneAgents: int(replicas(s.cp)), WorkerAgents: workers}
	if installStarted(aci) || aci.Spec.ProvisionRequirements == want {
		return nil
	}
	before := aci.DeepCopy()
	aci.Spec.ProvisionRequirements = want
	if err := r.Client.Patch(ctx, aci, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update AgentClusterInstall agent counts: %w", err)
	}
	return nil
}

// workerCount sums the replicas of the cluster's MachineDeployments.
func (r *Reconciler) workerCount(ctx context.Context, cluster *clusterv1.Cluster) (int, error) {
	list := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return 0, fmt.Errorf("list MachineDeployments: %w", err)
	}
	n := 0
	for _, md := range list.Items {
		n += int(ptr.Deref(md.Spec.Replicas, 0))
	}
	return n, nil
}

func replicas(cp *controlplanev1.OpenshiftAssistedControlPlane) int32 {
	return ptr.Deref(cp.Spec.Replicas, 3)
}

func desiredAgentClusterInstall(s *scope, workers int) (*hiveextv1.AgentClusterInstall, error) {
	cfg := &s.cp.Spec.Config
	n := replicas(s.cp)
	userManaged := n == 1 || len(cfg.APIVIPs) == 0
	platform := hiveextv1.PlatformTypeBareMetal
	if userManaged {
		platform = hiveextv1.PlatformTypeNone
	}
	aci := &hiveextv1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.cluster.Name, Namespace: s.cluster.Namespace,
			// As CAPOA labels it: the control plane's Machine labels and
			// assisted-service's consumer label naming our kind.
			Labels: mergeLabels(mergeLabels(s.cp.Spec.MachineTemplate.ObjectMeta.Labels, machineLabels(s.cp, s.cluster.Name)),
				map[string]string{aciConsumerLabel: controlPlaneKind}),
		},
		Spec: hiveextv1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: s.cluster.Name},
			ImageSetRef:           &hivev1.ClusterImageSetReference{Name: clusterImageSetName(s.cluster)},
			Networking:            networking(s.cluster, cfg.NetworkType, userManaged),
			ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: int(n), WorkerAgents: workers},
			SSHPublicKey:          cfg.SSHAuthorizedKey,
			APIVIPs:               cfg.APIVIPs,
			IngressVIPs:           cfg.IngressVIPs,
			MastersSchedulable:    cfg.MastersSchedulable,
			PlatformType:          platform,
		},
	}
	for _, m := range cfg.ManifestsConfigMapRefs {
		aci.Spec.ManifestsConfigMapRefs = append(aci.Spec.ManifestsConfigMapRefs, hiveextv1.ManifestsConfigMapReference{Name: m.Name})
	}
	if p := cfg.Proxy; p != nil {
		aci.Spec.Proxy = &hiveextv1.Proxy{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
	}
	if d := cfg.DiskEncryption; d != nil {
		aci.Spec.DiskEncryption = &hiveextv1.DiskEncryption{TangServers: d.TangServers}
		if d.EnableOn != "" {
			aci.Spec.DiskEncryption.EnableOn = ptr.To(d.EnableOn)
		}
		if d.Mode != "" {
			aci.Spec.DiskEncryption.Mode = ptr.To(d.Mode)
		}
	}
	if cfg.ImageRegistryRef != nil {
		// The mirrors reach the install only as these manifests: CAPOA
		// sets no mirrorRegistryRef on the AgentClusterInstall.
		aci.Spec.ManifestsConfigMapRefs = append(aci.Spec.ManifestsConfigMapRefs,
			hiveextv1.ManifestsConfigMapReference{Name: imageregistry.ManifestsConfigMapName})
	}
	overrides, err := installConfigOverrides(s.cp)
	if err != nil {
		return nil, err
	}
	if overrides != "" {
		aci.Annotations = map[string]string{hiveextv1.InstallConfigOverridesAnnotation: overrides}
	}
	return aci, nil
}

// networking takes the pod and service networks from the Cluster.
func networking(cluster *clusterv1.Cluster, networkType string, userManaged bool) hiveextv1.Networking {
	n := hiveextv1.Networking{NetworkType: networkType, UserManagedNetworking: ptr.To(userManaged)}
	pods := cluster.Spec.ClusterNetwork.Pods.CIDRBlocks
	if len(pods) == 0 {
		pods = []string{"10.128.0.0/14"}
	}
	for _, cidr := range pods {
		n.ClusterNetwork = append(n.ClusterNetwork, hiveextv1.ClusterNetworkEntry{CIDR: cidr, HostPrefix: 23})
	}
	n.ServiceNetwork = cluster.Spec.ClusterNetwork.Services.CIDRBlocks
	if len(n.ServiceNetwork) == 0 {
		n.ServiceNetwork = []string{"172.30.0.0/16"}
	}
	return n
}

// installConfigOverrides merges the user's install-config overrides
// annotation with the capabilities of the spec.
func installConfigOverrides(cp *controlplanev1.OpenshiftAssistedControlPlane) (string, error) {
	overrides := map[string]any{}
	if raw := cp.Annotations[controlplanev1.InstallConfigOverrideAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &overrides); err != nil {
			return "", fmt.Errorf("annotation %s is not a JSON object: %w", controlplanev1.InstallConfigOverrideAnnotation, err)
		}
	}
	c := cp.Spec.Config.Capabilities
	if c.BaselineCapability != "" || len(c.AdditionalEnabledCapabilities) > 0 {
		caps := map[string]any{}
		if existing, ok := overrides["capabilities"].(map[string]any); ok {
			caps = maps.Clone(existing)
		}
		if c.BaselineCapability != "" {
			caps["baselineCapabilitySet"] = c.BaselineCapability
		}
		if len(c.AdditionalEnabledCapabilities) > 0 {
			caps["additionalEnabledCapabilities"] = c.AdditionalEnabledCapabilities
		}
		overrides["capabilities"] = caps
	}
	if len(overrides) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(overrides)
	if err != nil {
		return "", fmt.Errorf("encode install-config overrides: %w", err)
	}
	return string(raw), nil
}
