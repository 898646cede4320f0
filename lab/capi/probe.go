package capi

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
)

// probeNamespace always exists on a Kubernetes API server.
const probeNamespace = metav1.NamespaceDefault

// WebhooksReady proves the API server calls CAPI's defaulting and validating
// webhooks here: a dry-run MachineSet comes back with the cluster-name label
// only the defaulting webhook sets, and a dry-run MachineSet whose cluster
// names disagree is refused with the validating webhook's message.
func (*Core) WebhooksReady(ctx context.Context, c client.Client) error {
	ms := probeMachineSet("probe", "probe")
	if err := c.Create(ctx, ms, client.DryRunAll); err != nil {
		return fmt.Errorf("dry-run MachineSet: %w", err)
	}
	if ms.Labels[clusterv1.ClusterNameLabel] != "probe" {
		return errors.New("MachineSet defaulting webhook not called yet")
	}
	bad := probeMachineSet("probe", "other")
	err := c.Create(ctx, bad, client.DryRunAll)
	if err == nil {
		return errors.New("MachineSet validating webhook not called yet")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.clusterName") {
		return fmt.Errorf("MachineSet validating webhook answered unexpectedly: %w", err)
	}
	return nil
}

func probeMachineSet(clusterName, templateClusterName string) *clusterv1.MachineSet {
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: probeNamespace},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: clusterName,
			Template: clusterv1.MachineTemplateSpec{
				Spec: clusterv1.MachineSpec{
					ClusterName: templateClusterName,
					Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("probe")},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "ProbeMachineTemplate", Name: "probe",
					},
				},
			},
		},
	}
}
