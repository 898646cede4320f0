package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/remote"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// clusterVersionName is the one ClusterVersion of an OpenShift cluster.
const clusterVersionName = "version"

// installed says whether assisted-service finished installing.
func installed(aci *hiveextv1.AgentClusterInstall) bool {
	if aci == nil {
		return false
	}
	switch aci.Status.DebugInfo.State {
	case hiveextv1.ClusterStateInstalled, hiveextv1.ClusterStateAddingHosts:
		return true
	}
	return false
}

// reconcileUpgrade records the installed version once the install is
// done and, when spec.distributionVersion moves past it, asks the
// workload cluster's version operator to update and follows its history.
func (r *Reconciler) reconcileUpgrade(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !installed(s.aci) || !ptrTrue(s.cp.Status.Initialization.ControlPlaneInitialized) {
		return ctrl.Result{}, nil
	}
	if s.cp.Status.DistributionVersion == "" {
		s.cp.Status.DistributionVersion = r.installedVersion(ctx, s)
	}
	want := s.cp.Spec.DistributionVersion
	if s.cp.Status.DistributionVersion == want {
		setUpgradeCompleted(s.cp)
		return ctrl.Result{}, nil
	}
	s.upgrading = true
	wc, err := r.Workload(ctx, s.cluster)
	if err != nil {
		setUpgradeWaiting(s.cp, controlplanev1.WorkloadClusterUnreachableReason, fmt.Sprintf("reach the workload cluster: %v", err))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	cv := &configv1.ClusterVersion{}
	if err := wc.Get(ctx, client.ObjectKey{Name: clusterVersionName}, cv); err != nil {
		setUpgradeWaiting(s.cp, controlplanev1.WorkloadClusterUnreachableReason, fmt.Sprintf("get ClusterVersion %s: %v", clusterVersionName, err))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	if done := r.followUpgrade(s, cv, want); done {
		s.upgrading = false
		s.cp.Status.DistributionVersion = want
		setUpgradeCompleted(s.cp)
		ctrl.LoggerFrom(ctx).Info("OpenShift update completed", "version", want)
		return ctrl.Result{}, r.recordRelease(ctx, s)
	}
	desired := r.desiredUpdate(s, cv, want)
	if cv.Spec.DesiredUpdate == nil || *cv.Spec.DesiredUpdate != desired {
		before := cv.DeepCopy()
		cv.Spec.DesiredUpdate = &desired
		if err := wc.Patch(ctx, cv, client.MergeFrom(before)); err != nil {
			setUpgradeWaiting(s.cp, controlplanev1.WorkloadClusterUnreachableReason, fmt.Sprintf("set ClusterVersion desiredUpdate: %v", err))
			return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
		}
		ctrl.LoggerFrom(ctx).Info("Requested OpenShift update", "from", s.cp.Status.DistributionVersion, "to", want, "image", desired.Image, "force", desired.Force)
		setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, fmt.Sprintf("requested the update from %s to %s", s.cp.Status.DistributionVersion, want))
	}
	return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
}

// desiredUpdate asks for a version the update graph offers by version
// only; any other by image (by digest when it was resolved) and forced, as
// it cannot be verified against the graph.
func (r *Reconciler) desiredUpdate(s *scope, cv *configv1.ClusterVersion, want string) configv1.Update {
	for _, u := range cv.Status.AvailableUpdates {
		if u.Version == want {
			return configv1.Update{Version: want}
		}
	}
	image := s.targetImage
	if s.target.Image != "" {
		image = s.target.Image
	}
	return configv1.Update{Version: want, Image: image, Force: true}
}

// followUpgrade reads the update's progress from the ClusterVersion into
// UpgradeCompleted and says whether it completed.
func (r *Reconciler) followUpgrade(s *scope, cv *configv1.ClusterVersion, want string) bool {
	if len(cv.Status.History) > 0 {
		h := cv.Status.History[0]
		if h.Version == want && h.State == configv1.CompletedUpdate {
			return true
		}
	}
	if cv.Spec.DesiredUpdate == nil || cv.Spec.DesiredUpdate.Version != want {
		return false
	}
	for _, c := range cv.Status.Conditions {
		switch {
		case c.Type == "ReleaseAccepted" && c.Status == configv1.ConditionFalse,
			c.Type == configv1.OperatorDegraded && c.Status == configv1.ConditionTrue,
			c.Type == "Failing" && c.Status == configv1.ConditionTrue:
			setUpgradeWaiting(s.cp, controlplanev1.UpgradeFailedReason, fmt.Sprintf("the cluster version operator reports %s=%s (%s): %s",
				c.Type, c.Status, c.Reason, strings.TrimSpace(c.Message)))
			return false
		}
	}
	msg := fmt.Sprintf("updating from %s to %s", s.cp.Status.DistributionVersion, want)
	for _, c := range cv.Status.Conditions {
		if c.Type == configv1.OperatorProgressing && c.Status == configv1.ConditionTrue && c.Message != "" {
			msg += ": " + c.Message
		}
	}
	setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, msg)
	return false
}

// installedVersion is the version the ClusterImageSet named when the
// install ran.
func (r *Reconciler) installedVersion(ctx context.Context, s *scope) string {
	cis := &hivev1.ClusterImageSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterImageSetName(s.cluster)}, cis); err == nil {
		if v := cis.Annotations[DistributionVersionAnnotation]; v != "" {
			return v
		}
	}
	return s.cp.Spec.DistributionVersion
}

// recordRelease points the ClusterImageSet at the release the cluster now
// runs, for the day-2 hosts that join it.
func (r *Reconciler) recordRelease(ctx context.Context, s *scope) error {
	cis := &hivev1.ClusterImageSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterImageSetName(s.cluster)}, cis); err != nil {
		return client.IgnoreNotFound(err)
	}
	before := cis.DeepCopy()
	cis.Spec.ReleaseImage = s.targetImage
	if s.target.Image != "" {
		cis.Spec.ReleaseImage = s.target.Image
	}
	if cis.Annotations == nil {
		cis.Annotations = map[string]string{}
	}
	cis.Annotations[DistributionVersionAnnotation] = s.cp.Status.DistributionVersion
	if err := r.Client.Patch(ctx, cis, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("record the running release in ClusterImageSet %s: %w", cis.Name, err)
	}
	return nil
}

// KubeconfigClient reaches workload clusters through their
// <cluster>-kubeconfig Secret, read with c.
func KubeconfigClient(c client.Client) WorkloadClient {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = configv1.Install(scheme)
	return func(ctx context.Context, cluster *clusterv1.Cluster) (client.Client, error) {
		cfg, err := remote.RESTConfig(ctx, "openshiftassisted-controlplane", c, client.ObjectKeyFromObject(cluster))
		if err != nil {
			return nil, err
		}
		return client.New(cfg, client.Options{Scheme: scheme})
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }
