package hypershift

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// HostedClusterFinalizer holds a HostedCluster until its control plane
// and objects are gone (HyperShift's HostedClusterFinalizer).
const HostedClusterFinalizer = "hypershift.openshift.io/finalizer"

// ClusterAnnotation names the HostedCluster (<namespace>/<name>) on every
// namespaced object the operator writes for it (HyperShift's
// createOrUpdate annotation enforcer).
const ClusterAnnotation = "hypershift.openshift.io/cluster"

// statusRecheck is how often a hosted cluster's status is looked at again
// without other changes.
const statusRecheck = 30 * time.Second

// reconcileHostedCluster does for a HostedCluster on the agent platform
// what HyperShift's HostedCluster controller and, for the status the lab
// needs, its control-plane operator do, in upstream's order: IDs and
// finalizer, the control-plane namespace and its Secrets, the hosted
// control plane, the HostedControlPlane, the ignition endpoint, the
// AgentCluster, the CAPI Cluster and the agent provider's RBAC.
func (o *Operator) reconcileHostedCluster(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hc := &hypershiftv1beta1.HostedCluster{}
	if err := o.client.Get(ctx, req.NamespacedName, hc); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, o.stopRuntime(req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if !hc.DeletionTimestamp.IsZero() {
		return o.deleteHostedCluster(ctx, hc)
	}
	if msg := unsupported(hc); msg != "" {
		return ctrl.Result{}, o.setInvalid(ctx, hc, msg)
	}
	if changed, err := o.defaultHostedCluster(ctx, hc); err != nil || changed {
		return ctrl.Result{}, err // the update brings another reconcile
	}
	release, busy := o.migrating(hc)
	if busy {
		return ctrl.Result{RequeueAfter: migrationRecheck}, nil
	}
	defer release()
	if err := o.reconcileControlPlane(ctx, hc); err != nil {
		return ctrl.Result{}, o.setFailed(ctx, hc, err)
	}
	return ctrl.Result{RequeueAfter: statusRecheck}, nil
}

// reconcileControlPlane makes and refreshes everything of a valid
// HostedCluster.
func (o *Operator) reconcileControlPlane(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	if err := o.ensureNamespace(ctx, hc); err != nil {
		return err
	}
	if err := o.copySecrets(ctx, hc); err != nil {
		return err
	}
	rt, err := o.ensureRuntime(ctx, hc)
	if err != nil {
		return err
	}
	if err := o.writeKubeconfigs(ctx, hc, rt); err != nil {
		return err
	}
	hcp, err := o.ensureHostedControlPlane(ctx, hc, rt)
	if err != nil {
		return err
	}
	if err := o.ensureAgentCluster(ctx, hc, hcp, rt); err != nil {
		return err
	}
	if err := o.ensureCAPICluster(ctx, hc); err != nil {
		return err
	}
	if err := o.ensureAgentRBAC(ctx, hc); err != nil {
		return err
	}
	return o.writeStatus(ctx, hc, hcp, rt)
}

// unsupported says why the lab cannot host a HostedCluster, or "".
func unsupported(hc *hypershiftv1beta1.HostedCluster) string {
	p := hc.Spec.Platform
	switch {
	case p.Type != hypershiftv1beta1.AgentPlatform:
		return fmt.Sprintf("the lab hosts clusters on the Agent platform only, not %q: set spec.platform.type to Agent", p.Type)
	case p.Agent == nil || p.Agent.AgentNamespace == "":
		return "spec.platform.agent.agentNamespace is empty: name the namespace of the Agents the cluster's NodePools may use"
	case hc.Spec.Release.Image == "":
		return "spec.release.image is empty: name the release the hosted cluster runs"
	}
	return ""
}

// defaultHostedCluster fills clusterID and infraID as HyperShift does
// (defaultClusterIDsIfNeeded) and adds the finalizer; it says whether it
// updated the HostedCluster.
func (o *Operator) defaultHostedCluster(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) (bool, error) {
	changed := controllerutil.AddFinalizer(hc, HostedClusterFinalizer)
	if hc.Spec.ClusterID == "" {
		hc.Spec.ClusterID, changed = uuid.NewString(), true
	}
	if hc.Spec.InfraID == "" {
		hc.Spec.InfraID, changed = newInfraID(hc.Name), true
	}
	if !changed {
		return false, nil
	}
	if err := o.client.Update(ctx, hc); err != nil {
		return false, fmt.Errorf("default the IDs of HostedCluster %s: %w", hc.Name, err)
	}
	return true, nil
}

// setInvalid records a configuration the lab cannot host; nothing is made
// for it.
func (o *Operator) setInvalid(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, msg string) error {
	return o.patchConditions(ctx, hc, metav1.Condition{
		Type: string(hypershiftv1beta1.ValidHostedClusterConfiguration), Status: metav1.ConditionFalse,
		Reason: hypershiftv1beta1.InvalidConfigurationReason, Message: msg,
	})
}

// setFailed records a failed reconcile as HyperShift does
// (ReconciliationSucceeded False, ReconciliationError) and returns the
// error for a retry.
func (o *Operator) setFailed(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, err error) error {
	if perr := o.patchConditions(ctx, hc, metav1.Condition{
		Type: string(hypershiftv1beta1.ReconciliationSucceeded), Status: metav1.ConditionFalse,
		Reason: reconciliationErrorReason, Message: err.Error(),
	}); perr != nil {
		o.opts.Logger.Error(perr, "Record the failed reconcile", "hostedCluster", hc.Name)
	}
	return err
}

// reconciliationErrorReason is HyperShift's reason for a failed reconcile.
const reconciliationErrorReason = "ReconciliationError"

func (o *Operator) patchConditions(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, conds ...metav1.Condition) error {
	patch := client.MergeFrom(hc.DeepCopy())
	for _, c := range conds {
		c.ObservedGeneration = hc.Generation
		meta.SetStatusCondition(&hc.Status.Conditions, c)
	}
	if err := o.client.Status().Patch(ctx, hc, patch); err != nil {
		return fmt.Errorf("write the status of HostedCluster %s: %w", hc.Name, err)
	}
	return nil
}

// ensureNamespace makes the control-plane namespace with HyperShift's
// labels (the agent platform's: no pod-security restriction, monitoring).
func (o *Operator) ensureNamespace(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControlPlaneNamespace(hc)}}
	_, err := controllerutil.CreateOrPatch(ctx, o.client, ns, func() error {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		for k, v := range controlPlaneNamespaceLabels {
			ns.Labels[k] = v
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("control-plane namespace %s: %w", ns.Name, err)
	}
	return nil
}

// controlPlaneNamespaceLabels are HyperShift's labels on a control-plane
// namespace whose control-plane operator image is not PSA-restricted.
var controlPlaneNamespaceLabels = map[string]string{
	"hypershift.openshift.io/hosted-control-plane":   "true",
	"pod-security.kubernetes.io/enforce":             "privileged",
	"pod-security.kubernetes.io/audit":               "privileged",
	"pod-security.kubernetes.io/warn":                "privileged",
	"security.openshift.io/scc.podSecurityLabelSync": "false",
	"hypershift.openshift.io/monitoring":             "true",
}

// annotate marks a namespaced object as written for the HostedCluster.
func annotate(obj metav1.Object, hc *hypershiftv1beta1.HostedCluster) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[ClusterAnnotation] = client.ObjectKeyFromObject(hc).String()
	obj.SetAnnotations(a)
}
