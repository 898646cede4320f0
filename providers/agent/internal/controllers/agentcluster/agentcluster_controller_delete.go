package agentcluster

import (
	"context"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"sigs.k8s.io/cluster-api/util"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// reconcileDelete lets a deleted AgentCluster go at once (upstream
// L474-483). Its ClusterDeployment, which it owns, then goes with it
// through the garbage collector, unless the AgentCluster is paused: then
// it is orphaned first and stays. The AgentClusterInstall is not the
// provider's to delete (it has no owner reference from the provider).
func (r *Reconciler) reconcileDelete(ctx context.Context, ac *capiagentv1.AgentCluster) error {
	if paused(ac) {
		ctrl.LoggerFrom(ctx).Info("The AgentCluster is paused: orphaning its ClusterDeployment before it goes")
		if err := r.orphanClusterDeployment(ctx, ac); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(ac, capiagentv1.AgentClusterFinalizerName)
	return nil
}

// orphanClusterDeployment removes the AgentCluster's owner reference from
// its ClusterDeployment, so that deleting the AgentCluster does not delete
// it (upstream L485-517). The reference removed is the one matching the
// AgentCluster's apiVersion, kind, name and UID exactly; a ClusterDeployment
// gone or not owned is left alone.
func (r *Reconciler) orphanClusterDeployment(ctx context.Context, ac *capiagentv1.AgentCluster) error {
	ref := ac.Status.ClusterDeploymentRef
	if ref.Name == "" {
		return nil
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get ClusterDeployment %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if !util.IsOwnedByObject(cd, ac, agentClusterGVK.GroupKind()) {
		return nil
	}
	apiVersion := agentClusterGVK.GroupVersion().String()
	var owners []metav1.OwnerReference
	for _, o := range cd.OwnerReferences {
		if o.APIVersion == apiVersion && o.Kind == agentClusterGVK.Kind && o.Name == ac.Name && o.UID == ac.UID {
			continue
		}
		owners = append(owners, o)
	}
	ctrl.LoggerFrom(ctx).Info("Orphaning the ClusterDeployment", "ClusterDeployment", klog.KObj(cd))
	base := cd.DeepCopy()
	cd.OwnerReferences = owners
	if err := r.Client.Patch(ctx, cd, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("orphan ClusterDeployment %s: %w", cd.Name, err)
	}
	return nil
}
