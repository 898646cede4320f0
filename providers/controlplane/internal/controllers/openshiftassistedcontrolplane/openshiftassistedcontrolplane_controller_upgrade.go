package openshiftassistedcontrolplane

import (
	"context"
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilversion "k8s.io/apimachinery/pkg/util/version"
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
// workload cluster's version operator to update (only to a release the
// registry serves) and follows the update.
func (r *Reconciler) reconcileUpgrade(ctx context.Context, s *scope) (ctrl.Result, error) {
	if !installed(s.aci) || !ptrTrue(s.cp.Status.Initialization.ControlPlaneInitialized) {
		return ctrl.Result{}, nil
	}
	if s.cp.Status.DistributionVersion == "" {
		s.cp.Status.DistributionVersion = r.installedVersion(ctx, s)
	}
	from, want := s.cp.Status.DistributionVersion, s.cp.Spec.DistributionVersion
	if from == want {
		// The desiredUpdate of a request given up before it completed stays
		// on the ClusterVersion: the cluster is not asked to go back.
		setNoUpgradeRequested(s.cp)
		setUpgradeCompleted(s.cp)
		return ctrl.Result{}, nil
	}
	s.upgrading = true
	setUpgradeAvailable(s)
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
	if completed(cv, want) {
		s.upgrading = false
		s.cp.Status.DistributionVersion = want
		setNoUpgradeRequested(s.cp)
		setUpgradeCompleted(s.cp)
		ctrl.LoggerFrom(ctx).Info("OpenShift update completed", "version", want)
		return ctrl.Result{}, r.recordRelease(ctx, s)
	}
	if s.target.Image == "" {
		if !requested(cv, want) {
			setUpgradeWaiting(s.cp, controlplanev1.UpgradeImageUnavailableReason,
				fmt.Sprintf("cannot update from %s to %s: %s", from, want, imageUnavailable(s)))
			ctrl.LoggerFrom(ctx).V(1).Info("Not requesting the OpenShift update: its release image cannot be read", "to", want, "image", s.targetImage)
			return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
		}
		// Requested while the registry served it: follow, rewrite nothing.
		followUpgrade(s, cv, want)
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	desired := desiredUpdate(s, want)
	if cv.Spec.DesiredUpdate == nil || *cv.Spec.DesiredUpdate != desired {
		before := cv.DeepCopy()
		cv.Spec.DesiredUpdate = &desired
		if err := wc.Patch(ctx, cv, client.MergeFrom(before)); err != nil {
			setUpgradeWaiting(s.cp, controlplanev1.WorkloadClusterUnreachableReason, fmt.Sprintf("set ClusterVersion desiredUpdate: %v", err))
			return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
		}
		ctrl.LoggerFrom(ctx).Info("Requested OpenShift update", "from", from, "to", want, "image", desired.Image, "force", desired.Force)
		setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, waitingForOperator(from, want))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	followUpgrade(s, cv, want)
	return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
}

// desiredUpdate is what CAPOA asks the version operator for: a GA
// release of the default repository by version only, which the operator
// finds in its update graph and verifies; any other release (a
// pre-release, or one from another repository) by the digest it resolved
// to, forced, since nothing can verify it against the graph. Forcing also
// skips the operator's Upgradeable precondition, as upstream's does. The
// release must have been resolved.
func desiredUpdate(s *scope, want string) configv1.Update {
	if gaRelease(s.cp, want) {
		return configv1.Update{Version: want}
	}
	return configv1.Update{Image: s.target.Image, Force: true}
}

// gaRelease: a version without pre-release or build suffix (4.21.1, not
// 4.21.0-rc.1 or a nightly) from the default release repository.
func gaRelease(cp *controlplanev1.OpenshiftAssistedControlPlane, version string) bool {
	if repo := cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation]; repo != "" && repo != controlplanev1.DefaultReleaseImageRepository {
		return false
	}
	v, err := utilversion.ParseSemantic(version)
	return err == nil && v.PreRelease() == "" && v.BuildMetadata() == ""
}

// completed says whether the cluster finished updating to want.
func completed(cv *configv1.ClusterVersion, want string) bool {
	if len(cv.Status.History) == 0 {
		return false
	}
	h := cv.Status.History[0]
	return h.Version == want && h.State == configv1.CompletedUpdate
}

// requested says whether the ClusterVersion asks for want: by version,
// or by an image the version operator took on as want.
func requested(cv *configv1.ClusterVersion, want string) bool {
	u := cv.Spec.DesiredUpdate
	switch {
	case u == nil:
		return false
	case u.Image == "":
		return u.Version == want
	}
	return working(cv, want)
}

// followUpgrade reads the progress of the requested update from the
// ClusterVersion into UpgradeCompleted. Until the version operator has
// observed the request, its conditions are about an earlier one (a release
// it refused before, say) and say nothing of this one.
func followUpgrade(s *scope, cv *configv1.ClusterVersion, want string) {
	from := s.cp.Status.DistributionVersion
	if cv.Status.ObservedGeneration < cv.Generation {
		setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, waitingForOperator(from, want))
		return
	}
	for _, c := range cv.Status.Conditions {
		switch {
		case c.Type == "ReleaseAccepted" && c.Status == configv1.ConditionFalse,
			c.Type == configv1.OperatorDegraded && c.Status == configv1.ConditionTrue,
			c.Type == "Failing" && c.Status == configv1.ConditionTrue:
			setUpgradeWaiting(s.cp, controlplanev1.UpgradeFailedReason, fmt.Sprintf("the cluster version operator reports %s=%s (%s): %s",
				c.Type, c.Status, c.Reason, strings.TrimSpace(c.Message)))
			return
		}
	}
	if !working(cv, want) {
		setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, waitingForOperator(from, want))
		return
	}
	msg := fmt.Sprintf("updating from %s to %s", from, want)
	for _, c := range cv.Status.Conditions {
		if c.Type == configv1.OperatorProgressing && c.Status == configv1.ConditionTrue && c.Message != "" {
			msg += ": " + c.Message
		}
	}
	setUpgradeWaiting(s.cp, controlplanev1.UpgradeInProgressReason, msg)
}

// working says whether the version operator took the requested release
// on: its desired release or newest history entry names it.
func working(cv *configv1.ClusterVersion, want string) bool {
	image := ""
	if cv.Spec.DesiredUpdate != nil {
		image = cv.Spec.DesiredUpdate.Image
	}
	names := func(version, img string) bool { return version == want || (image != "" && img == image) }
	if names(cv.Status.Desired.Version, cv.Status.Desired.Image) {
		return true
	}
	return len(cv.Status.History) > 0 && names(cv.Status.History[0].Version, cv.Status.History[0].Image)
}

func waitingForOperator(from, to string) string {
	return fmt.Sprintf("requested the update from %s to %s; waiting for the cluster version operator", from, to)
}

// imageUnavailable says why the release of spec.distributionVersion is
// unknown and what to do about it.
func imageUnavailable(s *scope) string {
	return fmt.Sprintf("cannot read the release image %s of OpenShift %s: %v; set spec.distributionVersion to a release the registry serves",
		s.targetImage, s.cp.Spec.DistributionVersion, s.targetErr)
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
// runs, for the day-2 hosts that join it: by digest, as at install; a
// release the hub cannot read leaves it as it is.
func (r *Reconciler) recordRelease(ctx context.Context, s *scope) error {
	if s.target.Image == "" {
		return nil
	}
	cis := &hivev1.ClusterImageSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterImageSetName(s.cluster)}, cis); err != nil {
		return client.IgnoreNotFound(err)
	}
	before := cis.DeepCopy()
	cis.Spec.ReleaseImage = s.target.Image
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
