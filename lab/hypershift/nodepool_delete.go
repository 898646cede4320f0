package hypershift

import (
	"context"
	"fmt"
	"strings"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// deleteNodePool removes what was made for a NodePool in HyperShift's
// order (nodepool_controller.go delete): the machine templates and the
// MachineDeployment, then, once its Machines are gone (their
// AgentMachines unbind their Agents), the token and user-data Secrets;
// then the finalizer goes.
func (o *Operator) deleteNodePool(ctx context.Context, np *hypershiftv1beta1.NodePool) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(np, NodePoolFinalizer) {
		return ctrl.Result{}, nil
	}
	cpns := np.Namespace + "-" + strings.ReplaceAll(np.Spec.ClusterName, ".", "-")
	key := client.ObjectKeyFromObject(np).String()
	templates := &capiagentv1.AgentMachineTemplateList{}
	if err := o.client.List(ctx, templates, client.InNamespace(cpns)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list machine templates of NodePool %s: %w", np.Name, err)
	}
	for i := range templates.Items {
		if err := o.deleteAnnotated(ctx, &templates.Items[i], key); err != nil {
			return ctrl.Result{}, err
		}
	}
	capi, err := o.capiForNodePool(ctx, np)
	if err != nil {
		return ctrl.Result{}, err
	}
	md := &clusterv1beta1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: cpns, Name: np.Name}}
	if err := capi.Delete(ctx, md); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("delete MachineDeployment of NodePool %s: %w", np.Name, err)
	}
	machines, err := nodePoolMachines(ctx, capi, cpns, np)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(machines) > 0 {
		return ctrl.Result{RequeueAfter: nodePoolRecheck}, nil
	}
	secrets := &corev1.SecretList{}
	if err := o.apiReader.List(ctx, secrets, client.InNamespace(cpns)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list Secrets of NodePool %s: %w", np.Name, err)
	}
	for i := range secrets.Items {
		if err := o.deleteAnnotated(ctx, &secrets.Items[i], key); err != nil {
			return ctrl.Result{}, err
		}
	}
	patch := client.MergeFrom(np.DeepCopy())
	controllerutil.RemoveFinalizer(np, NodePoolFinalizer)
	if err := o.client.Patch(ctx, np, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("release NodePool %s: %w", np.Name, err)
	}
	return ctrl.Result{}, nil
}

// deleteAnnotated deletes obj if it was made for the NodePool key.
func (o *Operator) deleteAnnotated(ctx context.Context, obj client.Object, key string) error {
	if obj.GetAnnotations()[NodePoolAnnotation] != key {
		return nil
	}
	if err := o.client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}
