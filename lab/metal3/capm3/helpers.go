package capm3

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Keys CAPM3 and the bare-metal operator share.
const (
	// hostAnnotation on a Metal3Machine names its BareMetalHost as
	// <namespace>/<name>.
	hostAnnotation = "metal3.io/BareMetalHost"
	// pausedAnnotation pauses the bare-metal operator on a host; CAPM3
	// does not choose paused hosts.
	pausedAnnotation = "baremetalhost.metal3.io/paused"
	// failureDomainLabel on a host is the failure domain it belongs to.
	failureDomainLabel = "infrastructure.cluster.x-k8s.io/failure-domain"
	// rebootAnnotationPrefix asks the bare-metal operator to power a host
	// off and, once the annotation is gone, on again.
	rebootAnnotationPrefix = "reboot.metal3.io/"
	// userDataSuffix names the copy of a Machine's bootstrap data Secret a
	// Metal3Machine hands its host.
	userDataSuffix = "-user-data"
	// providerIDPrefix is CAPM3's providerID scheme.
	providerIDPrefix = "metal3://"
)

// providerID is CAPM3's default providerID of a Metal3Machine on a host.
func providerID(namespace, host, m3m string) string {
	return providerIDPrefix + namespace + "/" + host + "/" + m3m
}

// ownerMachine returns the CAPI Machine that owns obj, or nil when it has
// none yet (core sets the owner reference after cloning).
func ownerMachine(ctx context.Context, c client.Client, obj metav1.Object) (*clusterv1.Machine, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Machine" || !strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			continue
		}
		m := &clusterv1.Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, m); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return m, nil
	}
	return nil, nil
}

// machineCluster returns the Cluster of a Machine.
func machineCluster(ctx context.Context, c client.Client, m *clusterv1.Machine) (*clusterv1.Cluster, error) {
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.ClusterName}, cluster); err != nil {
		return nil, fmt.Errorf("get Cluster %s of Machine %s: %w", m.Spec.ClusterName, m.Name, err)
	}
	return cluster, nil
}

// paused says whether CAPI's pause applies: the Cluster is paused or the
// object carries the paused annotation.
func paused(cluster *clusterv1.Cluster, obj metav1.Object) bool {
	if cluster != nil && cluster.Spec.Paused != nil && *cluster.Spec.Paused {
		return true
	}
	_, ok := obj.GetAnnotations()[clusterv1.PausedAnnotation]
	return ok
}

// setCondition sets a v1beta1 condition (CAPM3's v1beta1 types carry
// them), keeping its transition time when the status is unchanged.
func setCondition(list *clusterv1beta1.Conditions, c clusterv1beta1.Condition) {
	c.LastTransitionTime = metav1.Now()
	for i := range *list {
		old := &(*list)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	*list = append(*list, c)
}

func trueCondition(t clusterv1beta1.ConditionType) clusterv1beta1.Condition {
	return clusterv1beta1.Condition{Type: t, Status: corev1.ConditionTrue}
}

func falseCondition(t clusterv1beta1.ConditionType, reason, message string) clusterv1beta1.Condition {
	return clusterv1beta1.Condition{Type: t, Status: corev1.ConditionFalse, Severity: clusterv1beta1.ConditionSeverityInfo,
		Reason: reason, Message: message}
}

// ownerCluster returns the CAPI Cluster that owns obj, or nil when it has
// none yet.
func ownerCluster(ctx context.Context, c client.Client, obj metav1.Object) (*clusterv1.Cluster, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Cluster" || !strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			continue
		}
		cluster := &clusterv1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, cluster); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return cluster, nil
	}
	return nil, nil
}

func metaNow() metav1.Time { return metav1.Now() }
