package results

import (
	"fmt"
	"strings"
)

// Condition polarity: whether a condition type is healthy when True
// (positive) or when False (negative). The registry loader holds the live
// states of structured condition entries to it, so that no entry explains
// an object that ended unhealthy. This is the one place to add a type;
// check upstream which status is the healthy one before you do.

// positiveConditions are healthy when True.
var positiveConditions = map[string]bool{
	// CAPI v1beta2 contract (Machine, MachineSet, MachineDeployment).
	"Ready": true, "Available": true, "UpToDate": true, "HealthCheckSucceeded": true, "OwnerRemediated": true,
	// MAPI Machine (openshift/api machine/v1beta1).
	"InstanceExists": true, "Drainable": true, "Terminable": true,
	// assisted-service AgentClusterInstall and Agent.
	"Validated": true, "RequirementsMet": true, "Completed": true, "SpecSynced": true, "Connected": true,
	"Installed": true, "Bound": true,
	// MachineHealthCheck (MAO and CAPI): False once maxUnhealthy or
	// unhealthyLessThanOrEqualTo stops remediation.
	"RemediationAllowed": true,
}

// positiveSuffixes mark positive types by name: BootstrapConfigReady,
// InfrastructureReady, NodeReady, MachinesReady, NodeHealthy, ...
var positiveSuffixes = []string{"Ready", "Healthy", "UpToDate", "Available"}

// negativeConditions are healthy when False.
var negativeConditions = map[string]bool{
	// CAPI v1beta2 contract.
	"Deleting": true, "Paused": true, "Remediating": true, "ScalingUp": true, "ScalingDown": true,
	"Updating": true, "RollingOut": true,
	// MAPI Machine: set once the node was drained for deletion.
	"Drained": true,
	// Common operator and installer states.
	"Stalled": true, "Failed": true, "Degraded": true, "Progressing": true, "Stopped": true,
}

// leftoverConditions are states upstream leaves on objects that are
// healthy again: one controller sets the state and the API gives another
// the job of clearing it, which that controller does not do. A live state
// may be one of these, exactly as listed (status and reason), and nothing
// else of the type.
var leftoverConditions = map[string]conditionState{
	// CAPI's MachineHealthCheck sets ExternallyRemediated
	// False(WaitingForRemediation) when it creates a remediation request
	// and leaves the condition to the remediation controller
	// (api/core/v1beta2/machine_types.go, v1.13.4); CAPM3 v1.13.2 never
	// touches it, so a Machine rebooted back to health keeps it.
	"ExternallyRemediated": {Status: "False", Reason: "WaitingForRemediation"},
}

// polarity returns the healthy status of a condition type, or false when
// the type is in neither table.
func polarity(typ string) (string, bool) {
	switch {
	case positiveConditions[typ]:
		return "True", true
	case negativeConditions[typ]:
		return "False", true
	}
	for _, s := range positiveSuffixes {
		if strings.HasSuffix(typ, s) {
			return "True", true
		}
	}
	return "", false
}

// checkKnownPolarity rejects a condition type of unknown polarity, for an
// entry whose live states may be unhealthy by design: the type must still
// be one whose healthy status is known, so that the report can tell.
func checkKnownPolarity(typ string, _ conditionState) error {
	if _, ok := leftoverConditions[typ]; ok {
		return nil
	}
	if _, known := polarity(typ); !known {
		return fmt.Errorf("condition type %s has no polarity: add it to positiveConditions or negativeConditions in results/registry_polarity.go (healthy when True, or when False)", typ)
	}
	return nil
}

// checkLivePolarity rejects a live state that is not the healthy one.
func checkLivePolarity(typ string, st conditionState) error {
	if left, ok := leftoverConditions[typ]; ok {
		if st != left {
			return fmt.Errorf("%q: %s is explained live only as upstream leaves it on a healthy object, %q", st, typ, left)
		}
		return nil
	}
	healthy, known := polarity(typ)
	if !known {
		return fmt.Errorf("condition type %s has no polarity: add it to positiveConditions or negativeConditions in results/registry_polarity.go (healthy when True, or when False)", typ)
	}
	if st.Status != healthy {
		return fmt.Errorf("%q would explain a live object that ended unhealthy: %s is healthy when %s; live states must be healthy", st, typ, healthy)
	}
	return nil
}
