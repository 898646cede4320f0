package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/collections"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// reconcileNormal runs the phases. Machines do not wait for the install
// objects, and the install objects do not wait for the registry: a phase
// that cannot finish says why in a condition and asks to be retried.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := r.listMachines(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !s.cluster.Spec.ControlPlaneEndpoint.IsValid() {
		setWaitingForEndpoint(s.cp)
		return ctrl.Result{}, nil
	}
	var results []ctrl.Result
	var errs []error
	for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){
		r.reconcileRelease,
		r.reconcileClusterInstall,
		r.reconcileKubeconfig,
		r.reconcileUpgrade,
		r.reconcileMachines,
	} {
		res, err := phase(ctx, s)
		results = append(results, res)
		errs = append(errs, err)
	}
	return lowest(results), errors.Join(errs...)
}

// lowest combines phase results: the soonest requeue wins.
func lowest(results []ctrl.Result) ctrl.Result {
	var out ctrl.Result
	for _, r := range results {
		out = util.LowestNonZeroResult(out, r)
	}
	return out
}

// listMachines lists the Machines this control plane controls.
func (r *Reconciler) listMachines(ctx context.Context, s *scope) error {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.cp.Namespace),
		client.MatchingLabels(machineLabels(s.cp, s.cluster.Name))); err != nil {
		return fmt.Errorf("list control-plane Machines: %w", err)
	}
	s.machines = s.machines[:0]
	for i := range list.Items {
		m := &list.Items[i]
		if util.IsControlledBy(m, s.cp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane").GroupKind()) {
			s.machines = append(s.machines, m)
		}
	}
	return nil
}

// reconcileRelease resolves the release image of spec.distributionVersion
// (to a digest, with its Kubernetes version) when the registry answers.
func (r *Reconciler) reconcileRelease(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.targetImage = releaseImage(s.cp, s.cp.Spec.DistributionVersion)
	info, err := r.resolve(ctx, s, s.targetImage)
	if err != nil {
		s.targetErr = err
		setKubernetesVersionUnavailable(s.cp, err)
		ctrl.LoggerFrom(ctx).V(2).Info("Release image unavailable", "image", s.targetImage, "err", err.Error())
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	s.target = info
	setKubernetesVersionAvailable(s.cp, info)
	return ctrl.Result{}, nil
}

// releaseImage is the release image of an OpenShift version by tag.
func releaseImage(cp *controlplanev1.OpenshiftAssistedControlPlane, version string) string {
	repo := cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation]
	if repo == "" {
		repo = controlplanev1.DefaultReleaseImageRepository
	}
	return release.Image(repo, version, cp.Spec.OpenshiftAssistedConfigSpec.CPUArchitecture)
}

// resolve reads a release image where it is named, with the control
// plane's pull secret. As CAPOA, never through the mirrors of
// imageRegistryRef: a hub that cannot reach the release's registry needs
// the release-image-repository annotation to name a mirror.
func (r *Reconciler) resolve(ctx context.Context, s *scope, image string) (release.Info, error) {
	var pullSecret []byte
	if ref := s.cp.Spec.Config.PullSecretRef; ref != nil {
		secret := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cp.Namespace, Name: ref.Name}, secret); err != nil {
			return release.Info{}, fmt.Errorf("get pull secret %s: %w", ref.Name, err)
		}
		pullSecret = secret.Data[corev1.DockerConfigJsonKey]
	}
	return r.Releases.Resolve(ctx, image, nil, pullSecret)
}

// reconcileKubeconfig publishes the install's admin kubeconfig as the
// Cluster API kubeconfig Secret, which initializes the control plane.
func (r *Reconciler) reconcileKubeconfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.aci == nil {
		setWaitingForKubeconfig(s.cp, "the AgentClusterInstall does not exist yet")
		return ctrl.Result{}, nil
	}
	meta := s.aci.Spec.ClusterMetadata
	if meta == nil || meta.AdminKubeconfigSecretRef.Name == "" {
		setWaitingForKubeconfig(s.cp, fmt.Sprintf("AgentClusterInstall %s has published no admin kubeconfig yet (install state %q)",
			s.aci.Name, s.aci.Status.DebugInfo.State))
		return ctrl.Result{}, nil
	}
	admin := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.aci.Namespace, Name: meta.AdminKubeconfigSecretRef.Name}, admin)
	switch {
	case apierrors.IsNotFound(err):
		setWaitingForKubeconfig(s.cp, fmt.Sprintf("admin kubeconfig Secret %s does not exist yet", meta.AdminKubeconfigSecretRef.Name))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("get admin kubeconfig: %w", err)
	}
	data := admin.Data["kubeconfig"]
	if len(data) == 0 {
		setWaitingForKubeconfig(s.cp, fmt.Sprintf("admin kubeconfig Secret %s has no key \"kubeconfig\"", admin.Name))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	if err := r.writeKubeconfig(ctx, s, data); err != nil {
		return ctrl.Result{}, err
	}
	setKubeconfigAvailable(s.cp, s.cluster.Name)
	return ctrl.Result{}, nil
}

func (r *Reconciler) writeKubeconfig(ctx context.Context, s *scope, data []byte) error {
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = s.cluster.Name+"-kubeconfig", s.cluster.Namespace
	op, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		if secret.CreationTimestamp.IsZero() {
			if err := controllerutil.SetControllerReference(s.cp, secret, r.Client.Scheme()); err != nil {
				return err
			}
		} else if !isControlledByUs(secret, s.cp) {
			return fmt.Errorf("secret %s exists and is not this control plane's: delete it so the kubeconfig can be published", secret.Name)
		}
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
		secret.Type = clusterv1.ClusterSecretType
		secret.Data = map[string][]byte{"value": data}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write kubeconfig Secret: %w", err)
	}
	if op == controllerutil.OperationResultCreated {
		ctrl.LoggerFrom(ctx).Info("Published the cluster's kubeconfig", "Secret", secret.Name)
	}
	return nil
}

func isControlledByUs(o client.Object, cp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == cp.UID
}

// reconcileDelete deletes the Machines, then the install objects and the
// cluster-scoped ClusterImageSet, and lets the control plane go once its
// Machines are gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	setDeleting(s.cp)
	if s.cluster != nil {
		if err := r.listMachines(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	var errs []error
	for _, m := range collections.FromMachines(s.machines...).Filter(collections.Not(collections.HasDeletionTimestamp)) {
		if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete Machine %s: %w", m.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(s.machines) > 0 {
		ctrl.LoggerFrom(ctx).Info("Waiting for control-plane Machines to be deleted", "count", len(s.machines))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	if s.cluster != nil {
		for _, obj := range []client.Object{
			&hiveextv1.AgentClusterInstall{}, &hivev1.ClusterDeployment{},
		} {
			obj.SetNamespace(s.cp.Namespace)
			obj.SetName(s.cluster.Name)
			if err := r.deleteIfOurs(ctx, obj, s.cp); err != nil {
				errs = append(errs, err)
			}
		}
		cis := &hivev1.ClusterImageSet{}
		cis.Name = clusterImageSetName(s.cluster)
		if err := r.Client.Delete(ctx, cis); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete ClusterImageSet %s: %w", cis.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(s.cp, Finalizer)
	return ctrl.Result{}, nil
}

// deleteIfOurs deletes obj (named in it) if the control plane controls it.
func (r *Reconciler) deleteIfOurs(ctx context.Context, obj client.Object, cp *controlplanev1.OpenshiftAssistedControlPlane) error {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !isControlledByUs(obj, cp) {
		return nil
	}
	if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}
