package assisted

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Metadata the ZTP binding puts on a BareMetalHost.
const (
	inspectAnnotation  = "inspect.metal3.io"
	detachedAnnotation = "baremetalhost.metal3.io/detached"
	// spokeCreatedAnnotation marks a hub host whose spoke BareMetalHost
	// and Machine were created.
	spokeCreatedAnnotation = "bmac.agent-install.openshift.io/spoke-bmh-machine-created"
	backupLabel            = "cluster.open-cluster-management.io/backup"
	// bmacFinalizer is the BMAC's finalizer on an InfraEnv's hosts.
	bmacFinalizer = "bmac.agent-install.openshift.io/deprovision"
	// AssistedDeployMethod is the custom deploy step (of the ironic
	// agent in the discovery image) that starts the assisted agent.
	AssistedDeployMethod = "start_assisted_install"
	// bmacController is the value of the detached and paused annotations.
	bmacController = "assisted-service-controller"
)

func (s *Service) setupBMHController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-bmac").
		For(&bmov1alpha1.BareMetalHost{}).
		Watches(&agentv1beta1.InfraEnv{}, handler.EnqueueRequestsFromMapFunc(s.bmhsOfInfraEnv)).
		Watches(&agentv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(bmhOfAgent)).
		// The converged flow waits for the host's image (same name).
		Watches(&bmov1alpha1.PreprovisioningImage{}, &handler.EnqueueRequestForObject{}).
		Complete(reconcile.Func(s.reconcileBMH))
}

func (s *Service) bmhsOfInfraEnv(ctx context.Context, obj client.Object) []reconcile.Request {
	return s.labelledWithInfraEnv(ctx, obj, &bmov1alpha1.BareMetalHostList{})
}

// labelledWithInfraEnv are the objects of list's kind labelled with the
// InfraEnv obj, as requests.
func (s *Service) labelledWithInfraEnv(ctx context.Context, obj client.Object, list client.ObjectList) []reconcile.Request {
	if err := s.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{agentv1beta1.InfraEnvNameLabel: obj.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
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
// BareMetalHost labelled with an InfraEnv gets the hub-backup label and
// the BMAC's finalizer; in the converged flow (Options.ConvergedFlow,
// upstream's default) it is provisioned with the custom deploy
// start_assisted_install once its PreprovisioningImage holds the
// InfraEnv's ISO, and detached once provisioned; in the non-converged
// flow it boots the InfraEnv's ISO as a live ISO once the bare-metal
// operator made it ready or available and the image cooled down, and is
// detached once its host reboots into the installed system. A detached
// host is then paused with its status saved in an annotation
// (PAUSE_PROVISIONED_BMHS, on by default). A host added to an installed
// cluster gets its spoke BareMetalHost and Machine once installing.
func (s *Service) reconcileBMH(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := s.client.Get(ctx, req.NamespacedName, bmh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ieName := bmh.Labels[agentv1beta1.InfraEnvNameLabel]
	if ieName == "" {
		return ctrl.Result{}, s.releaseHost(ctx, bmh, false)
	}
	if !bmh.DeletionTimestamp.IsZero() {
		return s.handleBMHDelete(ctx, bmh)
	}
	ie := &agentv1beta1.InfraEnv{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: ieName}, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	agent, err := s.agentOfHost(ctx, bmh)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := bmh.DeepCopy()
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	labelForBackup(bmh)
	controllerutil.AddFinalizer(bmh, bmacFinalizer)
	var res ctrl.Result
	if agent != nil && unbindingPendingUserAction(agent) && s.rebootIntoDiscovery(bmh) {
		return ctrl.Result{}, s.patchBMH(ctx, bmh, patch, before)
	}
	if !s.pauseAndDetach(bmh, agent) {
		if res, err = s.bootDiscovery(ctx, bmh, ie); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := s.patchBMH(ctx, bmh, patch, before); err != nil {
		return ctrl.Result{}, err
	}
	if agent == nil {
		return res, nil
	}
	return res, s.recordDay2Host(ctx, bmh, agent)
}

// patchBMH writes what a reconcile changed and tells of it.
func (s *Service) patchBMH(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, patch client.Patch, before *bmov1alpha1.BareMetalHost) error {
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("update BareMetalHost %s: %w", bmh.Name, err)
	}
	s.recordBMHEvents(before, bmh)
	return nil
}

// bootDiscovery has the host boot its InfraEnv's discovery image, the
// way the flow in use does it.
func (s *Service) bootDiscovery(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, ie *agentv1beta1.InfraEnv) (ctrl.Result, error) {
	if s.opts.ConvergedFlow {
		return ctrl.Result{}, s.setCustomDeploy(ctx, bmh)
	}
	return ctrl.Result{RequeueAfter: s.setLiveISO(bmh, ie)}, nil
}

// recordBMHEvents tells what a reconcile changed about the host.
func (s *Service) recordBMHEvents(before, after *bmov1alpha1.BareMetalHost) {
	if after.Spec.Image != nil && (before.Spec.Image == nil || before.Spec.Image.URL != after.Spec.Image.URL) {
		s.events.add(after.Namespace, after.Name, "BareMetalHost %s boots the discovery ISO of its InfraEnv", after.Name)
	}
	if after.Spec.CustomDeploy != nil && before.Spec.CustomDeploy == nil {
		s.events.add(after.Namespace, after.Name, "BareMetalHost %s is provisioned with the custom deploy %s", after.Name, after.Spec.CustomDeploy.Method)
	}
	if _, was := before.Annotations[detachedAnnotation]; !was && after.Annotations[detachedAnnotation] != "" {
		why := "its host rebooted into the installed system"
		if s.opts.ConvergedFlow {
			why = "the bare-metal operator provisioned it"
		}
		s.events.add(after.Namespace, after.Name, "BareMetalHost %s detached: %s", after.Name, why)
	}
}

// releaseHost lets a host go at once: the BMAC's finalizer is removed
// from a host no longer labelled with an InfraEnv, or being deleted
// without its Agent (handleBMHDelete), and a paused host being deleted is
// unpaused, since a paused host is never reconciled and the operator's
// finalizer would stay forever; one annotated to remove its Agent is no
// longer detached either.
func (s *Service) releaseHost(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, attach bool) error {
	patch := client.MergeFrom(bmh.DeepCopy())
	changed := controllerutil.RemoveFinalizer(bmh, bmacFinalizer)
	drop := []string{bmov1alpha1.PausedAnnotation}
	if attach {
		drop = append(drop, detachedAnnotation)
	}
	for _, key := range drop {
		if _, has := bmh.Annotations[key]; has && !bmh.DeletionTimestamp.IsZero() {
			delete(bmh.Annotations, key)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("release BareMetalHost %s: %w", bmh.Name, err)
	}
	return nil
}

// agentOfHost is the host's Agent, or nil.
func (s *Service) agentOfHost(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) (*agentv1beta1.Agent, error) {
	agents := &agentv1beta1.AgentList{}
	if err := s.client.List(ctx, agents, client.InNamespace(bmh.Namespace), client.MatchingLabels{agentv1beta1.BareMetalHostLabel: bmh.Name}); err != nil {
		return nil, fmt.Errorf("list agents of BareMetalHost %s: %w", bmh.Name, err)
	}
	if len(agents.Items) == 0 {
		return nil, nil
	}
	return &agents.Items[0], nil
}

// labelForBackup marks an InfraEnv's host for the hub's backup, as the
// BMAC does for every host an InfraEnv references.
func labelForBackup(bmh *bmov1alpha1.BareMetalHost) {
	if bmh.Labels[backupLabel] == "" {
		bmh.Labels[backupLabel] = "true"
	}
}

// detachStages are the agent's stages after which the non-converged flow
// detaches its host: the host rebooted into (or failed installing) the
// installed system.
var detachStages = []agentv1beta1.HostStage{agentv1beta1.HostStageFailed, agentv1beta1.HostStageRebooting,
	agentv1beta1.HostStageJoined, agentv1beta1.HostStageDone}

// pauseAndDetach detaches a host that is done with (converged flow: the
// operator provisioned it) or rebooted out of (non-converged: its agent
// reached a detach stage) the discovery image and, once the operator
// reports it detached, pauses it with its status saved; it says whether
// the host is detached. A host that lost its provisioning state is
// unpaused for the operator to restore it from the saved status.
func (s *Service) pauseAndDetach(bmh *bmov1alpha1.BareMetalHost, agent *agentv1beta1.Agent) bool {
	if bmh.Annotations == nil {
		bmh.Annotations = map[string]string{}
	}
	done := bmh.Status.Provisioning.State == bmov1alpha1.StateProvisioned
	if !s.opts.ConvergedFlow {
		done = agent != nil && slices.Contains(detachStages, agent.Status.Progress.CurrentStage)
	}
	if done {
		bmh.Annotations[detachedAnnotation] = bmacController
		if bmh.Status.OperationalStatus == bmov1alpha1.OperationalStatusDetached {
			raw, _ := json.Marshal(bmh.Status) // plain struct: cannot fail
			bmh.Annotations[bmov1alpha1.StatusAnnotation] = string(raw)
			bmh.Annotations[bmov1alpha1.PausedAnnotation] = bmacController
		}
	}
	if bmh.Status.Provisioning.State == bmov1alpha1.StateNone && bmh.Annotations[bmov1alpha1.StatusAnnotation] != "" {
		delete(bmh.Annotations, bmov1alpha1.PausedAnnotation)
	}
	_, detached := bmh.Annotations[detachedAnnotation]
	return detached
}

// recordDay2Host gives a host added to an installed BareMetal-platform
// cluster its spoke BareMetalHost and Machine <clusterdeployment>-<bmh>
// as soon as its agent is installing, as upstream's BMAC does, and marks
// the hub host so that it happens once. Day-1 hosts got theirs when the
// cluster's machine API started.
func (s *Service) recordDay2Host(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, a *agentv1beta1.Agent) error {
	ref := a.Spec.ClusterDeploymentName
	if bmh.Annotations[spokeCreatedAnnotation] != "" || ref == nil || !agentInstalling(a) {
		return nil
	}
	key := ClusterKey{Namespace: ref.Namespace, Name: ref.Name}
	cd := &hivev1.ClusterDeployment{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, cd); err != nil {
		return client.IgnoreNotFound(err)
	}
	aci, err := s.aciOfCluster(ctx, key)
	if err != nil || aci == nil || !cd.Spec.Installed || networkingOf(aci).platform == hiveextv1beta1.PlatformTypeNone {
		return err
	}
	spoke := s.opts.Spokes.Get(key)
	if spoke == nil {
		return fmt.Errorf("BareMetalHost %s: no workload cluster %s", bmh.Name, key)
	}
	host := Day2Host{InstalledHost: installedHost(a, bmh), Machine: day2Machine(cd.Name, bmh.Name), ClusterName: cd.Name, HubSpec: bmh.Spec}
	if err := spoke.AddInstalledHost(ctx, host); err != nil {
		return fmt.Errorf("record day-2 host %s in %s: %w", bmh.Name, key, err)
	}
	patch := client.MergeFrom(bmh.DeepCopy())
	bmh.Annotations[spokeCreatedAnnotation] = time.Now().String()
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("mark BareMetalHost %s: %w", bmh.Name, err)
	}
	s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s and Machine %s created in the cluster", bmh.Name, host.Machine)
	return nil
}

// agentInstalling: the states in which the BMAC writes a day-2 host's
// spoke objects (the install has started, the host not yet rebooted
// into the cluster's).
func agentInstalling(a *agentv1beta1.Agent) bool {
	st := a.Status.DebugInfo.State
	return st == agentv1beta1.AgentStateInstalling || st == agentv1beta1.AgentStateInstallingInProgress
}

// setCustomDeploy has the operator provision the host with the deploy
// step that starts the assisted agent, once the host's
// PreprovisioningImage holds the InfraEnv's ISO (reason
// InfraEnvAvailable): before that, the operator would boot another
// ramdisk, where the step fails. Nothing else of the spec is touched:
// online, cleaning and inspection stay as the site wrote them.
func (s *Service) setCustomDeploy(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	if cd := bmh.Spec.CustomDeploy; cd != nil && cd.Method == AssistedDeployMethod {
		return nil
	}
	img := &bmov1alpha1.PreprovisioningImage{}
	if err := s.client.Get(ctx, client.ObjectKeyFromObject(bmh), img); err != nil {
		return client.IgnoreNotFound(err) // the image's watch brings us back
	}
	ready := meta.FindStatusCondition(img.Status.Conditions, string(bmov1alpha1.ConditionImageReady))
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != agentv1beta1.ReasonInfraEnvAvailable {
		return nil
	}
	bmh.Spec.CustomDeploy = &bmov1alpha1.CustomDeploy{Method: AssistedDeployMethod}
	return nil
}

// setLiveISO points the host at the InfraEnv's ISO (non-converged flow):
// inspection disabled (the agent reports the inventory), cleaning
// disabled (it needs the ironic agent this flow does not boot), and the
// image set only on a ready or available host (a host in another state
// has its image removed first so that a new one is fetched), and not
// before the image cooled down; it returns how long that still is.
func (s *Service) setLiveISO(bmh *bmov1alpha1.BareMetalHost, ie *agentv1beta1.InfraEnv) time.Duration {
	if _, ok := bmh.Annotations[inspectAnnotation]; !ok {
		bmh.Annotations[inspectAnnotation] = "disabled"
	}
	bmh.Spec.AutomatedCleaningMode = bmov1alpha1.CleaningModeDisabled
	iso := ie.Status.ISODownloadURL
	if iso == "" || (bmh.Spec.Image != nil && bmh.Spec.Image.URL == iso) {
		return 0
	}
	if ie.Status.CreatedTime != nil {
		if wait := time.Until(ie.Status.CreatedTime.Add(s.opts.ImageCooldown)); wait > 0 {
			return wait
		}
	}
	if st := bmh.Status.Provisioning.State; st != bmov1alpha1.StateReady && st != bmov1alpha1.StateAvailable {
		bmh.Spec.Image = nil
		return 0
	}
	format := "live-iso"
	bmh.Spec.Image = &bmov1alpha1.Image{URL: iso, DiskFormat: &format}
	bmh.Spec.Online = true
	return 0
}
