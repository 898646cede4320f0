package openshiftassistedconfig

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
)

func setWaitingForMachine(s *scope) {
	msg := "no Machine owns this config yet: Cluster API sets the owner when a Machine references it"
	if s.machineMissing {
		msg = "the Machine named in the owner references does not exist (deleted?)"
	}
	setDataSecretWaiting(s.config, bootstrapv1.WaitingForMachineReason, msg)
}

func setDataSecretWaiting(c *bootstrapv1.OpenshiftAssistedConfig, reason, msg string) {
	conditions.Set(c, metav1.Condition{
		Type: bootstrapv1.DataSecretAvailableCondition, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
	})
}

func setDataSecretAvailable(c *bootstrapv1.OpenshiftAssistedConfig) {
	conditions.Set(c, metav1.Condition{
		Type: bootstrapv1.DataSecretAvailableCondition, Status: metav1.ConditionTrue, Reason: bootstrapv1.DataSecretAvailableReason,
		Message: fmt.Sprintf("the discovery ignition is in Secret %s", c.Status.DataSecretName),
	})
	if !conditions.IsTrue(c, bootstrapv1.InfraEnvReadyCondition) {
		setInfraEnvReady(c)
	}
}

func setInfraEnvWaiting(c *bootstrapv1.OpenshiftAssistedConfig, reason, msg string) {
	conditions.Set(c, metav1.Condition{
		Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
	})
	if !conditions.IsTrue(c, bootstrapv1.DataSecretAvailableCondition) {
		setDataSecretWaiting(c, bootstrapv1.WaitingForInfraEnvReason, "waiting for the InfraEnv: "+msg)
	}
}

func setInfraEnvReady(c *bootstrapv1.OpenshiftAssistedConfig) {
	conditions.Set(c, metav1.Condition{
		Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionTrue, Reason: bootstrapv1.InfraEnvReadyReason,
		Message: fmt.Sprintf("the discovery image of InfraEnv %s is built", c.Status.InfraEnvName),
	})
}

func setDeleting(c *bootstrapv1.OpenshiftAssistedConfig) {
	for _, t := range []string{bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DataSecretAvailableCondition} {
		if conditions.Has(c, t) {
			continue
		}
		conditions.Set(c, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: bootstrapv1.DeletingReason, Message: "the config is being deleted"})
	}
}

// setReadyCondition summarises InfraEnvReady and DataSecretAvailable.
func setReadyCondition(c *bootstrapv1.OpenshiftAssistedConfig) {
	if !c.DeletionTimestamp.IsZero() {
		conditions.Set(c, metav1.Condition{
			Type: bootstrapv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: bootstrapv1.DeletingReason,
			Message: "the config is being deleted: removing its InfraEnv and Agents",
		})
		return
	}
	if !conditions.Has(c, bootstrapv1.DataSecretAvailableCondition) {
		return
	}
	if err := conditions.SetSummaryCondition(c, c, bootstrapv1.ReadyCondition,
		conditions.ForConditionTypes{bootstrapv1.DataSecretAvailableCondition, bootstrapv1.InfraEnvReadyCondition},
		conditions.IgnoreTypesIfMissing{bootstrapv1.InfraEnvReadyCondition},
	); err != nil {
		conditions.Set(c, metav1.Condition{
			Type: bootstrapv1.ReadyCondition, Status: metav1.ConditionUnknown, Reason: "InternalError", Message: err.Error(),
		})
	}
}
