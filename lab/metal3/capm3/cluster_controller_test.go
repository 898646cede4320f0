package capm3

import (
	"fmt"
	"testing"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestMetal3Cluster: a Metal3Cluster owned by its Cluster is ready (what
// core reads on the v1beta1 contract) once its control-plane endpoint is
// complete, and says what is missing until then.
func TestMetal3Cluster(t *testing.T) {
	e := newEnv(t)
	m3c := &capm3v1beta1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "lab", Namespace: e.ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "lab",
			UID: e.cluster.UID, Controller: ptr.To(true)}}},
		Spec: capm3v1beta1.Metal3ClusterSpec{ControlPlaneEndpoint: capm3v1beta1.APIEndpoint{Host: "api.lab.example"}}}
	e.create(m3c)
	eventually(t, "not ready without a port", func() error {
		if err := get(m3c); err != nil {
			return err
		}
		c := condition(m3c.Status.Conditions, capm3v1beta1.BaremetalInfrastructureReadyCondition)
		if m3c.Status.Ready || c == nil || c.Status != corev1.ConditionFalse || c.Reason != capm3v1beta1.ControlPlaneEndpointFailedReason {
			return fmt.Errorf("ready=%v condition=%+v", m3c.Status.Ready, c)
		}
		return nil
	})
	if err := retryUpdate(m3c, func() { m3c.Spec.ControlPlaneEndpoint.Port = 6443 }, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ready with a complete endpoint", func() error {
		if err := get(m3c); err != nil {
			return err
		}
		if !m3c.Status.Ready || m3c.Status.FailureMessage != nil {
			return fmt.Errorf("ready=%v failureMessage=%v", m3c.Status.Ready, m3c.Status.FailureMessage)
		}
		return nil
	})
	if len(m3c.Finalizers) != 1 || m3c.Finalizers[0] != capm3v1beta1.ClusterFinalizer {
		t.Errorf("finalizers = %v", m3c.Finalizers)
	}
}
