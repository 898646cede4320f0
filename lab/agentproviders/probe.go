package agentproviders

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
)

// probeNamespace always exists on a Kubernetes API server.
const probeNamespace = metav1.NamespaceDefault

// WebhooksReady proves the API server calls the bootstrap provider's
// webhook: a dry-run config with a malformed kubelet label is refused with
// the webhook's message (the schema alone accepts it).
func (*Bootstrap) WebhooksReady(ctx context.Context, c client.Client) error {
	cfg := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: probeNamespace},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
			NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"probe"}},
		},
	}
	return refused(c.Create(ctx, cfg, client.DryRunAll), "OpenshiftAssistedConfig", `must be "key=value"`)
}

// WebhooksReady proves the API server calls the control-plane provider's
// webhook: a dry-run control plane of 2 replicas is refused with the
// webhook's message (the schema alone accepts it).
func (*ControlPlane) WebhooksReady(ctx context.Context, c client.Client) error {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: probeNamespace},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.17.0",
			Replicas:            ptr.To[int32](2),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "ProbeMachineTemplate", Name: "probe",
					},
				},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
		},
	}
	return refused(c.Create(ctx, cp, client.DryRunAll), "OpenshiftAssistedControlPlane", "cannot keep etcd quorum")
}

// refused checks that err is the webhook's refusal.
func refused(err error, kind, message string) error {
	switch {
	case err == nil:
		return fmt.Errorf("%s validating webhook not called yet", kind)
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), message):
		return nil
	case apierrors.IsInvalid(err):
		return fmt.Errorf("%s validating webhook answered unexpectedly: %w", kind, err)
	}
	return errors.Join(fmt.Errorf("dry-run %s", kind), err)
}
