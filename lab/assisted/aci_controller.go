package assisted

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// installRecheck paces the install flow while hosts work.
const installRecheck = 3 * time.Second

func (s *Service) setupACIController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-agentclusterinstall").
		For(&hiveextv1beta1.AgentClusterInstall{}).
		Watches(&agentv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(s.aciForAgent)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(s.aciForCD)).
		Complete(reconcile.Func(s.reconcileACI))
}

func (s *Service) aciForAgent(ctx context.Context, obj client.Object) []reconcile.Request {
	a := obj.(*agentv1beta1.Agent)
	aci, err := s.aciOfAgent(ctx, a)
	if err != nil || aci == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: aci.Namespace, Name: aci.Name}}}
}

func (s *Service) aciForCD(ctx context.Context, obj client.Object) []reconcile.Request {
	aci, err := s.aciOfCluster(ctx, ClusterKey{Namespace: obj.GetNamespace(), Name: obj.GetName()})
	if err != nil || aci == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: aci.Namespace, Name: aci.Name}}}
}

// install is one reconcile's view of a cluster install.
type install struct {
	aci     *hiveextv1beta1.AgentClusterInstall
	cd      *hivev1.ClusterDeployment
	release clusterRelease
	agents  []agentv1beta1.Agent
	// mirrors are the install-config's mirrors: the AgentClusterInstall's
	// mirrorRegistryRef, else the hub's; nil for none.
	mirrors *MirrorRegistry
}

func (i *install) key() ClusterKey { return ClusterKey{Namespace: i.cd.Namespace, Name: i.cd.Name} }

func (s *Service) reconcileACI(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := s.client.Get(ctx, req.NamespacedName, aci); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !aci.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := aci.Status.DeepCopy()
	in, syncErr := s.loadInstall(ctx, aci)
	if syncErr != nil {
		return s.specNotSynced(ctx, aci, before, syncErr)
	}
	setACICondition(aci, hiveextv1beta1.ConditionSpecSynced, true, "SyncOK", "The Spec has been successfully applied")
	result, err := s.advance(ctx, in)
	s.summarize(in)
	if saveErr := s.saveACI(ctx, aci, before); saveErr != nil {
		return ctrl.Result{}, saveErr
	}
	if syncErr := s.syncClusterDeployment(ctx, in); syncErr != nil {
		return ctrl.Result{}, syncErr
	}
	return result, err
}

// specNotSynced reports why an install's inputs cannot be used, as
// upstream's SpecSynced: a release that cannot be read is a backend error,
// retried; anything else an input error, waiting for the spec to change
// (its message lacks upstream's "The Spec could not be synced due to an
// input error:" prefix).
func (s *Service) specNotSynced(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, before *hiveextv1beta1.AgentClusterInstallStatus, syncErr error) (ctrl.Result, error) {
	var read *releaseReadError
	if errors.As(syncErr, &read) {
		setACICondition(aci, hiveextv1beta1.ConditionSpecSynced, false, "BackendError",
			"The Spec could not be synced due to backend error: "+syncErr.Error())
		return ctrl.Result{RequeueAfter: releaseRetry}, s.saveACI(ctx, aci, before)
	}
	setACICondition(aci, hiveextv1beta1.ConditionSpecSynced, false, "InputError", syncErr.Error())
	return ctrl.Result{}, s.saveACI(ctx, aci, before)
}

// releaseRetry is how soon a release that could not be read is read again.
const releaseRetry = 15 * time.Second

func (s *Service) saveACI(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, before *hiveextv1beta1.AgentClusterInstallStatus) error {
	if equality.Semantic.DeepEqual(before, &aci.Status) {
		return nil
	}
	return s.client.Status().Update(ctx, aci)
}

// loadInstall reads what an install needs; an error is a spec problem.
func (s *Service) loadInstall(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall) (*install, error) {
	cd := &hivev1.ClusterDeployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err != nil {
		return nil, fmt.Errorf("ClusterDeployment %s: %v", aci.Spec.ClusterDeploymentRef.Name, err)
	}
	rel, err := s.installRelease(ctx, aci, cd)
	if err != nil {
		return nil, err
	}
	mirrors, err := s.installMirrors(ctx, aci)
	if err != nil {
		return nil, err
	}
	agents, err := s.boundAgents(ctx, &agentv1beta1.ClusterReference{Namespace: cd.Namespace, Name: cd.Name})
	if err != nil {
		return nil, err
	}
	sort.Slice(agents, func(i, j int) bool { return hostname(&agents[i]) < hostname(&agents[j]) })
	return &install{aci: aci, cd: cd, release: rel, agents: agents, mirrors: mirrors}, nil
}

// installRelease is the release of the ClusterImageSet the install names.
// An imported cluster (installed before the service saw it) may name none,
// as upstream's ensureClusterImageSetRef allows: its release is unknown
// and its day-2 hosts pull nothing before they write the disk.
func (s *Service) installRelease(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, cd *hivev1.ClusterDeployment) (clusterRelease, error) {
	if aci.Spec.ImageSetRef == nil || aci.Spec.ImageSetRef.Name == "" {
		if cd.Spec.Installed {
			return clusterRelease{}, nil
		}
		return clusterRelease{}, fmt.Errorf("spec.imageSetRef is required: name the ClusterImageSet to install")
	}
	imageSet := &hivev1.ClusterImageSet{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: aci.Spec.ImageSetRef.Name}, imageSet); err != nil {
		return clusterRelease{}, fmt.Errorf("ClusterImageSet %s: %v", aci.Spec.ImageSetRef.Name, err)
	}
	hub, err := s.hubMirrors(ctx)
	if err != nil {
		return clusterRelease{}, err
	}
	return s.releaseVersion(ctx, imageSet, hub)
}

// setACICondition sets a hive install condition to True or False.
func setACICondition(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType, ok bool, reason, msg string) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	setACIConditionStatus(aci, t, installCondition{status, reason, msg})
}

// aciCondition is the ACI's condition of a type, or nil.
func aciCondition(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType) *hivev1.ClusterInstallCondition {
	for i := range aci.Status.Conditions {
		if aci.Status.Conditions[i].Type == t {
			return &aci.Status.Conditions[i]
		}
	}
	return nil
}

func aciConditionTrue(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType) bool {
	c := aciCondition(aci, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

func aciConditionReason(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType, reason string) bool {
	c := aciCondition(aci, t)
	return c != nil && c.Reason == reason
}

// setACIConditionStatus sets a hive install condition, moving its
// transition time only when its status changes.
func setACIConditionStatus(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType, c installCondition) {
	status, reason, msg := c.status, c.reason, c.message
	now := metav1.Now()
	for i := range aci.Status.Conditions {
		c := &aci.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	aci.Status.Conditions = append(aci.Status.Conditions, hivev1.ClusterInstallCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: now, LastProbeTime: now,
	})
}
