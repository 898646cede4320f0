package hypershift

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/hypershift/ignitionserver"
)

// NodePoolFinalizer holds a NodePool until its Machines and Secrets are
// gone (HyperShift's NodePool controller finalizer, the same string as
// the HostedCluster's).
const NodePoolFinalizer = "hypershift.openshift.io/finalizer"

// nodePoolRecheck is how soon a NodePool waiting for its HostedCluster or
// its Machines is looked at again.
const nodePoolRecheck = 5 * time.Second

func (o *Operator) setupNodePoolController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("hypershift-nodepool").
		For(&hypershiftv1beta1.NodePool{}).
		Watches(&clusterv1beta1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(nodePoolOfAnnotated)).
		Watches(&hypershiftv1beta1.HostedCluster{}, handler.EnqueueRequestsFromMapFunc(o.nodePoolsOfHostedCluster)).
		Complete(reconcile.Func(o.reconcileNodePool))
}

// nodePoolOfAnnotated maps an object HyperShift made for a NodePool to it.
func nodePoolOfAnnotated(_ context.Context, obj client.Object) []reconcile.Request {
	ns, name, ok := splitKey(obj.GetAnnotations()[NodePoolAnnotation])
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func (o *Operator) nodePoolsOfHostedCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	pools := &hypershiftv1beta1.NodePoolList{}
	if err := o.client.List(ctx, pools, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, np := range pools.Items {
		if np.Spec.ClusterName == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&np)})
		}
	}
	return out
}

// reconcileNodePool does for a NodePool of an agent HostedCluster what
// HyperShift's NodePool controller does with upgrade type Replace: the
// token and user-data Secrets, the AgentMachineTemplate and the
// MachineDeployment, and the status from them.
func (o *Operator) reconcileNodePool(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	np := &hypershiftv1beta1.NodePool{}
	if err := o.client.Get(ctx, req.NamespacedName, np); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !np.DeletionTimestamp.IsZero() {
		return o.deleteNodePool(ctx, np)
	}
	hc := &hypershiftv1beta1.HostedCluster{}
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: np.Namespace, Name: np.Spec.ClusterName}, hc); err != nil {
		return ctrl.Result{}, fmt.Errorf("HostedCluster %s of NodePool %s: %w", np.Spec.ClusterName, np.Name, err)
	}
	if controllerutil.AddFinalizer(np, NodePoolFinalizer) {
		return ctrl.Result{}, o.client.Update(ctx, np)
	}
	release, busy := o.migrating(hc)
	if busy {
		return ctrl.Result{RequeueAfter: migrationRecheck}, nil
	}
	defer release()
	if np.Spec.Management.UpgradeType != hypershiftv1beta1.UpgradeTypeReplace {
		return ctrl.Result{}, o.setNodePoolCondition(ctx, np, condition(hypershiftv1beta1.NodePoolUpdateManagementEnabledConditionType, false,
			hypershiftv1beta1.NodePoolValidationFailedReason,
			fmt.Sprintf("the lab runs NodePools with spec.management.upgradeType %s only, not %q", hypershiftv1beta1.UpgradeTypeReplace, np.Spec.Management.UpgradeType)))
	}
	if hc.Status.IgnitionEndpoint == "" || hc.Status.KubeConfig == nil {
		err := o.setNodePoolCondition(ctx, np, condition(string(hypershiftv1beta1.IgnitionEndpointAvailable), false,
			hypershiftv1beta1.IgnitionEndpointMissingReason, "Ignition endpoint not available, waiting"))
		return ctrl.Result{RequeueAfter: nodePoolRecheck}, err
	}
	in, err := o.nodePoolInput(ctx, np, hc)
	if err != nil {
		return ctrl.Result{}, err
	}
	capi, err := o.capiFor(hc)
	if err != nil {
		return ctrl.Result{}, err
	}
	md, err := o.applyNodePoolObjects(ctx, hc, capi, in)
	if err != nil {
		return ctrl.Result{}, err
	}
	return o.writeNodePoolStatus(ctx, np, capi, in, md)
}

// nodePoolInput gathers what the NodePool's objects are made from: the
// release, the ignition endpoint and CA, and the token of the current
// config, kept while its Secret exists.
func (o *Operator) nodePoolInput(ctx context.Context, np *hypershiftv1beta1.NodePool, hc *hypershiftv1beta1.HostedCluster) (NodePoolObjectsInput, error) {
	cpns := ControlPlaneNamespace(hc)
	rel := o.release(np.Spec.Release.Image)
	in := NodePoolObjectsInput{
		NodePool: np, ControlPlaneNamespace: cpns, InfraID: hc.Spec.InfraID,
		ReleaseImage: rel.Image, ReleaseVersion: rel.Version, PullSecretName: hc.Spec.PullSecret.Name,
		IgnitionEndpoint: hc.Status.IgnitionEndpoint,
	}
	ca := &corev1.Secret{}
	if err := o.apiReader.Get(ctx, client.ObjectKey{Namespace: cpns, Name: ignitionserver.CASecretName}, ca); err != nil {
		return in, fmt.Errorf("ignition CA of NodePool %s: %w", np.Name, err)
	}
	in.IgnitionCA = ca.Data[corev1.TLSCertKey]
	token := &corev1.Secret{}
	err := o.apiReader.Get(ctx, client.ObjectKeyFromObject(TokenSecret(in)), token)
	switch {
	case err == nil:
		in.Token = string(token.Data["token"])
	case apierrors.IsNotFound(err):
		in.Token = uuid.NewString()
	default:
		return in, fmt.Errorf("token of NodePool %s: %w", np.Name, err)
	}
	return in, nil
}

// applyNodePoolObjects writes the token Secret (once: its token stays),
// the user-data Secret, the AgentMachineTemplate (once: a changed spec has
// another name) and the MachineDeployment.
func (o *Operator) applyNodePoolObjects(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, capi capiAccess, in NodePoolObjectsInput) (*clusterv1beta1.MachineDeployment, error) {
	if err := o.createOnce(ctx, TokenSecret(in)); err != nil {
		return nil, err
	}
	userData, err := UserDataSecret(in)
	if err != nil {
		return nil, err
	}
	want := userData.DeepCopy()
	if err := o.applySecret(ctx, hc, userData, func() {
		userData.Annotations[NodePoolAnnotation] = want.Annotations[NodePoolAnnotation]
		userData.Data, userData.Immutable = want.Data, want.Immutable
	}); err != nil {
		return nil, err
	}
	template, err := AgentMachineTemplate(in)
	if err != nil {
		return nil, err
	}
	if err := o.createOnce(ctx, template); err != nil {
		return nil, err
	}
	built := MachineDeployment(in, template)
	md := &clusterv1beta1.MachineDeployment{ObjectMeta: built.ObjectMeta}
	md.Labels, md.Annotations = nil, nil
	if _, err := controllerutil.CreateOrPatch(ctx, capi, md, func() error {
		md.Labels = mergeMaps(md.Labels, built.Labels)
		md.Annotations = mergeMaps(md.Annotations, built.Annotations)
		delete(md.Annotations, clusterv1beta1.PausedAnnotation)
		md.Spec.ClusterName, md.Spec.Replicas, md.Spec.Selector = built.Spec.ClusterName, built.Spec.Replicas, built.Spec.Selector
		md.Spec.Strategy = built.Spec.Strategy
		md.Spec.Template = propagatedTemplate(md.Spec.Template.Spec, built.Spec.Template)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("write MachineDeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	return md, nil
}

// propagatedTemplate is the MachineDeployment's template as HyperShift
// rebuilds it (propagateVersionAndTemplate): the version and the user
// data stay as stored until the user-data Secret's name changes (a new
// release or config), the machine template's name until a new template
// is made. So a version a webhook defaulted ("v4.21.0" where the NodePool
// says "4.21.0") is never written back, which would roll every node.
func propagatedTemplate(current clusterv1beta1.MachineSpec, built clusterv1beta1.MachineTemplateSpec) clusterv1beta1.MachineTemplateSpec {
	out := *built.DeepCopy()
	if ptr.Deref(current.Bootstrap.DataSecretName, "") == ptr.Deref(built.Spec.Bootstrap.DataSecretName, "") {
		out.Spec.Version = current.Version
	}
	return out
}

// createOnce creates obj unless it exists.
func (o *Operator) createOnce(ctx context.Context, obj client.Object) error {
	if err := o.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func mergeMaps(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}

// splitKey splits <namespace>/<name>.
func splitKey(key string) (string, string, bool) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:], i > 0 && i < len(key)-1
		}
	}
	return "", "", false
}
