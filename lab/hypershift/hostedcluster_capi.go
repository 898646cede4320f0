package hypershift

import (
	"context"
	"fmt"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/lab/hypershift/ignitionserver"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// Names of the agent provider's RBAC in the agent namespace (HyperShift's
// agent platform, for the control-plane namespace it is for).
const (
	agentRBACLabel        = "hypershift.openshift.io/capi-provider-agent-rbac"
	agentRolePrefix       = "capi-provider-role-"
	agentRoleBindingPrefx = "cluster-api-agent-"
	// capiProviderServiceAccount runs HyperShift's capi-provider
	// Deployment in the control-plane namespace.
	capiProviderServiceAccount = "capi-provider"
)

// ensureAgentCluster writes the AgentCluster HyperShift's agent platform
// makes (agent.go ReconcileCAPIInfraCR): named as the HostedCluster, with
// the ignition server's /ignition URL and CA Secret and the control
// plane's endpoint.
func (o *Operator) ensureAgentCluster(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, hcp *hypershiftv1beta1.HostedControlPlane, rt *hostedRuntime) error {
	cpns := ControlPlaneNamespace(hc)
	ac := &capiagentv1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cpns, Name: hc.Name}}
	_, err := controllerutil.CreateOrPatch(ctx, o.client, ac, func() error {
		annotate(ac, hc)
		ac.Spec.IgnitionEndpoint = &capiagentv1.IgnitionEndpoint{
			Url:                    "https://" + rt.ignition.Endpoint() + "/ignition",
			CaCertificateReference: &capiagentv1.CaCertificateReference{Namespace: cpns, Name: ignitionserver.CASecretName},
		}
		ep := hcp.Status.ControlPlaneEndpoint
		ac.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: ep.Host, Port: ep.Port}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write AgentCluster %s/%s: %w", cpns, hc.Name, err)
	}
	return nil
}

// capiClusterKey is the CAPI Cluster of a HostedCluster: named by its
// infraID in the control-plane namespace.
func capiClusterKey(hc *hypershiftv1beta1.HostedCluster) client.ObjectKey {
	return client.ObjectKey{Namespace: ControlPlaneNamespace(hc), Name: hc.Spec.InfraID}
}

// ensureCAPICluster creates the CAPI Cluster as HyperShift does, at
// v1beta1, once (reconcileCAPICluster): only the cluster annotation and
// the references to the HostedControlPlane and the AgentCluster. Later
// reconciles only keep it unpaused.
func (o *Operator) ensureCAPICluster(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	key := capiClusterKey(hc)
	capi, err := o.capiFor(hc)
	if err != nil {
		return err
	}
	cl := &clusterv1beta1.Cluster{}
	err = capi.live.Get(ctx, key, cl)
	switch {
	case apierrors.IsNotFound(err):
		cl = capiCluster(hc)
		if err := capi.Create(ctx, cl); err != nil {
			return fmt.Errorf("create CAPI Cluster %s: %w", key, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read CAPI Cluster %s: %w", key, err)
	case cl.Spec.Paused:
		patch := client.MergeFrom(cl.DeepCopy())
		cl.Spec.Paused = false
		if err := capi.Patch(ctx, cl, patch); err != nil {
			return fmt.Errorf("unpause CAPI Cluster %s: %w", key, err)
		}
	}
	return nil
}

func capiCluster(hc *hypershiftv1beta1.HostedCluster) *clusterv1beta1.Cluster {
	key := capiClusterKey(hc)
	cl := &clusterv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: clusterv1beta1.ClusterSpec{
			ControlPlaneRef: &corev1.ObjectReference{
				APIVersion: hypershiftv1beta1.GroupVersion.String(), Kind: "HostedControlPlane",
				Namespace: key.Namespace, Name: hc.Name,
			},
			InfrastructureRef: &corev1.ObjectReference{
				APIVersion: capiagentv1.GroupVersion.String(), Kind: "AgentCluster",
				Namespace: key.Namespace, Name: hc.Name,
			},
		},
	}
	annotate(cl, hc)
	return cl
}

// ensureAgentRBAC lets the control plane's capi-provider service account
// bind Agents of the agent namespace (agent.go ReconcileCredentials).
// The lab's provider runs in the hub's process with its credentials; the
// Role and RoleBinding are written as HyperShift writes them.
func (o *Operator) ensureAgentRBAC(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	ns, cpns := hc.Spec.Platform.Agent.AgentNamespace, ControlPlaneNamespace(hc)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentRolePrefix + cpns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.client, role, func() error {
		labelAgentRBAC(role, hc)
		role.Rules = []rbacv1.PolicyRule{{
			APIGroups: []string{"agent-install.openshift.io"}, Resources: []string{"agents"},
			Verbs: []string{"get", "list", "watch", "update", "patch"},
		}}
		return nil
	}); err != nil {
		return fmt.Errorf("write Role %s/%s: %w", ns, role.Name, err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentRoleBindingPrefx + cpns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.client, rb, func() error {
		labelAgentRBAC(rb, hc)
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: cpns, Name: capiProviderServiceAccount}}
		return nil
	}); err != nil {
		return fmt.Errorf("write RoleBinding %s/%s: %w", ns, rb.Name, err)
	}
	return nil
}

func labelAgentRBAC(obj metav1.Object, hc *hypershiftv1beta1.HostedCluster) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[agentRBACLabel] = "true"
	obj.SetLabels(labels)
	annotate(obj, hc)
}

// deleteAgentRBAC removes the Role and RoleBinding of a control plane.
func (o *Operator) deleteAgentRBAC(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	if hc.Spec.Platform.Agent == nil {
		return nil
	}
	ns, cpns := hc.Spec.Platform.Agent.AgentNamespace, ControlPlaneNamespace(hc)
	for _, obj := range []client.Object{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentRoleBindingPrefx + cpns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: agentRolePrefix + cpns}},
	} {
		if err := o.client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete %s/%s: %w", ns, obj.GetName(), err)
		}
	}
	return nil
}
