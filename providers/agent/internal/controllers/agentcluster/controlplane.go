package agentcluster

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// controlPlane is what a ClusterDeployment needs to know of the control
// plane it stands for (upstream L62-68).
type controlPlane struct {
	clusterName       string // the name of the Cluster's control plane object
	baseDomain        string
	pullSecret        string // a Secret in the AgentCluster's namespace
	kubeconfig        string // a Secret in the AgentCluster's namespace
	kubeadminPassword string // a Secret in the AgentCluster's namespace; may be empty
}

// controlPlane reads the control plane of the AgentCluster's Cluster
// (upstream L193-258): the object the Cluster's controlPlaneRef names,
// read unstructured at version v1beta1 of its group (HyperShift's
// HostedControlPlane), else v1beta2 (a Cluster API control plane). Its
// fields are those of a HostedControlPlane: spec.dns.baseDomain,
// spec.pullSecret.name, status.kubeConfig.name and, optionally,
// status.kubeadminPassword.name. nil, nil means wait: no owner Cluster, no
// control plane reference, or a field not set yet.
func (r *Reconciler) controlPlane(ctx context.Context, ac *capiagentv1.AgentCluster) (*controlPlane, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster, err := r.ownerCluster(ctx, ac)
	if err != nil || cluster == nil {
		if cluster == nil && err == nil {
			log.Info("Waiting for the Cluster controller to set the owner reference")
		}
		return nil, err
	}
	ref := cluster.Spec.ControlPlaneRef
	if !ref.IsDefined() {
		log.Info("Waiting for the Cluster to name its control plane")
		return nil, nil
	}
	obj, err := r.readControlPlane(ctx, cluster.Namespace, ref)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{clusterName: ref.Name}
	required := []struct {
		into *string
		path []string
	}{
		{&cp.baseDomain, []string{"spec", "dns", "baseDomain"}},
		{&cp.pullSecret, []string{"spec", "pullSecret", "name"}},
		{&cp.kubeconfig, []string{"status", "kubeConfig", "name"}},
	}
	for _, f := range required {
		v, found, err := unstructured.NestedString(obj.Object, f.path...)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s %s: %w", fieldPath(f.path), ref.Kind, ref.Name, err)
		}
		if !found {
			log.Info("Waiting for the control plane to set a field", "field", fieldPath(f.path))
			return nil, nil
		}
		*f.into = v
	}
	// Optional: neither its absence nor a wrong type stops the reconcile
	// (L251-254).
	cp.kubeadminPassword, _, _ = unstructured.NestedString(obj.Object, "status", "kubeadminPassword", "name")
	return cp, nil
}

// readControlPlane gets the control plane object at v1beta1 of its group,
// else at v1beta2. Upstream falls back only when the v1beta1 read is Not
// Found (L221-228). A real API server answers that only for an object
// missing at every version; for a kind not served at v1beta1, which is
// what the fallback is for, the client fails with a no-match error before
// asking, and upstream gives up. Here the fallback follows either answer,
// and a Not Found is the error reported over a no-match.
func (r *Reconciler) readControlPlane(ctx context.Context, namespace string, ref clusterv1.ContractVersionedObjectReference) (*unstructured.Unstructured, error) {
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	var err, notFound error
	for _, version := range []string{"v1beta1", "v1beta2"} {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(ref.APIGroup + "/" + version)
		obj.SetKind(ref.Kind)
		err = r.Client.Get(ctx, key, obj)
		switch {
		case err == nil:
			return obj, nil
		case apierrors.IsNotFound(err):
			notFound = err
		case !meta.IsNoMatchError(err):
			return nil, fmt.Errorf("get control plane %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
		}
	}
	if notFound != nil {
		err = notFound
	}
	return nil, fmt.Errorf("get control plane %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
}

// ownerCluster returns the Cluster named by an owner reference of kind
// Cluster whose apiVersion is exactly cluster.x-k8s.io/v1beta2 or /v1beta1
// (upstream L175-191); nil when there is none.
func (r *Reconciler) ownerCluster(ctx context.Context, ac *capiagentv1.AgentCluster) (*clusterv1.Cluster, error) {
	for _, ref := range ac.OwnerReferences {
		if ref.Kind != clusterv1.ClusterKind || (ref.APIVersion != clusterv1.GroupVersion.String() && ref.APIVersion != clusterV1Beta1) {
			continue
		}
		c := &clusterv1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ac.Namespace, Name: ref.Name}, c); err != nil {
			return nil, fmt.Errorf("get owner Cluster %s: %w", ref.Name, err)
		}
		return c, nil
	}
	return nil, nil
}

// clusterV1Beta1 is the older apiVersion of an owner Cluster upstream
// still accepts.
const clusterV1Beta1 = "cluster.x-k8s.io/v1beta1"

func fieldPath(path []string) string { return strings.Join(path, ".") }
