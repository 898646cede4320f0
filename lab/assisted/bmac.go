package assisted

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Annotations the ZTP binding puts on a BareMetalHost.
const (
	inspectAnnotation  = "inspect.metal3.io"
	detachedAnnotation = "baremetalhost.metal3.io/detached"
)

func (s *Service) setupBMHController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-bmac").
		For(&bmov1alpha1.BareMetalHost{}).
		Watches(&agentv1beta1.InfraEnv{}, handler.EnqueueRequestsFromMapFunc(s.bmhsOfInfraEnv)).
		Watches(&agentv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(bmhOfAgent)).
		Complete(reconcile.Func(s.reconcileBMH))
}

func (s *Service) bmhsOfInfraEnv(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &bmov1alpha1.BareMetalHostList{}
	if err := s.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{agentv1beta1.InfraEnvNameLabel: obj.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, b := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}})
	}
	return out
}

func bmhOfAgent(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[agentv1beta1.BareMetalHostLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// reconcileBMH is the ZTP binding (assisted-service's BMAC): a
// BareMetalHost labelled with an InfraEnv boots that InfraEnv's ISO as a
// live ISO; once its Agent installed the host, the host is detached from
// the bare-metal operator, which must not touch an installed node.
func (s *Service) reconcileBMH(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := s.client.Get(ctx, req.NamespacedName, bmh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ieName := bmh.Labels[agentv1beta1.InfraEnvNameLabel]
	if ieName == "" || !bmh.DeletionTimestamp.IsZero() || bmh.Annotations[detachedAnnotation] != "" {
		return ctrl.Result{}, nil
	}
	ie := &agentv1beta1.InfraEnv{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: ieName}, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ie.Status.ISODownloadURL == "" {
		return ctrl.Result{}, nil // the image is not ready; the InfraEnv's update brings us back
	}
	agent, err := s.installedAgentOf(ctx, bmh)
	if err != nil {
		return ctrl.Result{}, err
	}
	if agent == nil {
		return ctrl.Result{}, s.bootLiveISO(ctx, bmh, ie.Status.ISODownloadURL)
	}
	// The spoke takes the host over before the hub lets it go.
	if err := s.recordDay2Host(ctx, bmh, agent); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, s.detach(ctx, bmh)
}

// installedAgentOf is the host's Agent once it installed the host, else nil.
func (s *Service) installedAgentOf(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) (*agentv1beta1.Agent, error) {
	agents := &agentv1beta1.AgentList{}
	if err := s.client.List(ctx, agents, client.InNamespace(bmh.Namespace), client.MatchingLabels{agentv1beta1.BareMetalHostLabel: bmh.Name}); err != nil {
		return nil, fmt.Errorf("list agents of BareMetalHost %s: %w", bmh.Name, err)
	}
	for i := range agents.Items {
		if agents.Items[i].Status.Progress.CurrentStage == agentv1beta1.HostStageDone {
			return &agents.Items[i], nil
		}
	}
	return nil, nil
}

// recordDay2Host gives a host added to an installed cluster its spoke
// BareMetalHost and Machine <clusterdeployment>-<baremetalhost>, as
// assisted-service's BMAC does; day-1 hosts got theirs when the cluster's
// machine API started.
func (s *Service) recordDay2Host(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, a *agentv1beta1.Agent) error {
	ref := a.Spec.ClusterDeploymentName
	if a.Status.Kind != agentv1beta1.HostKindAddToExistingClusterHost || ref == nil {
		return nil
	}
	spoke := s.opts.Spokes.Get(ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
	if spoke == nil {
		return fmt.Errorf("BareMetalHost %s: no workload cluster %s/%s", bmh.Name, ref.Namespace, ref.Name)
	}
	machine := day2Machine(ref.Name, bmh.Name)
	if err := spoke.AddInstalledHost(ctx, machine, installedHost(a, bmh)); err != nil {
		return fmt.Errorf("record day-2 host %s in %s/%s: %w", bmh.Name, ref.Namespace, ref.Name, err)
	}
	s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s and Machine %s created in the cluster", bmh.Name, machine)
	return nil
}

func (s *Service) bootLiveISO(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, iso string) error {
	if bmh.Spec.Image != nil && bmh.Spec.Image.URL == iso && bmh.Spec.Online {
		return nil
	}
	patch := client.MergeFrom(bmh.DeepCopy())
	format := "live-iso"
	bmh.Spec.Image = &bmov1alpha1.Image{URL: iso, DiskFormat: &format}
	bmh.Spec.Online = true
	bmh.Spec.AutomatedCleaningMode = bmov1alpha1.CleaningModeDisabled
	if bmh.Annotations == nil {
		bmh.Annotations = map[string]string{}
	}
	bmh.Annotations[inspectAnnotation] = "disabled"
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("point BareMetalHost %s at the discovery ISO: %w", bmh.Name, err)
	}
	s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s boots the discovery ISO of its InfraEnv", bmh.Name)
	return nil
}

func (s *Service) detach(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	patch := client.MergeFrom(bmh.DeepCopy())
	if bmh.Annotations == nil {
		bmh.Annotations = map[string]string{}
	}
	bmh.Annotations[detachedAnnotation] = "assisted-service-controller"
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("detach BareMetalHost %s: %w", bmh.Name, err)
	}
	s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s detached: its host is installed", bmh.Name)
	return nil
}
