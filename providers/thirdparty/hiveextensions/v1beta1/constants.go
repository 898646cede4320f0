package v1beta1

import (
	hivev1 "github.com/openshift/hive/apis/hive/v1"
)

// Condition types on AgentClusterInstalls. RequirementsMet, Completed,
// Failed and Stopped are hive's ClusterInstall contract, which hive copies
// to the ClusterDeployment.
const (
	// ConditionSpecSynced: the spec was applied to assisted-service.
	ConditionSpecSynced hivev1.ClusterInstallConditionType = "SpecSynced"
	// ConditionValidated: the cluster's validations pass.
	ConditionValidated hivev1.ClusterInstallConditionType = "Validated"
	// ConditionRequirementsMet: enough Agents are ready to install.
	ConditionRequirementsMet = hivev1.ClusterInstallRequirementsMet
	// ConditionCompleted: the install finished successfully.
	ConditionCompleted = hivev1.ClusterInstallCompleted
	// ConditionFailed: the install failed.
	ConditionFailed = hivev1.ClusterInstallFailed
	// ConditionStopped: assisted-service stopped working on the install
	// (look at Completed and Failed for why).
	ConditionStopped = hivev1.ClusterInstallStopped
	// ConditionLastInstallationPreparationFailed: the last preparation
	// attempt failed.
	ConditionLastInstallationPreparationFailed hivev1.ClusterInstallConditionType = "LastInstallationPreparationFailed"
)

// Condition reasons.
const (
	// SpecSynced reasons.
	ReasonSyncOK       = "SyncOK"
	ReasonBackendError = "BackendError"
	ReasonInputError   = "InputError"

	// RequirementsMet reasons.
	ReasonClusterReady               = "ClusterIsReady"
	ReasonClusterNotReady            = "ClusterNotReady"
	ReasonClusterAlreadyInstalling   = "ClusterAlreadyInstalling"
	ReasonClusterInstallationStopped = "ClusterInstallationStopped"
	ReasonInsufficientAgents         = "InsufficientAgents"
	ReasonUnapprovedAgents           = "UnapprovedAgents"
	ReasonUnsyncedAgents             = "UnsyncedAgents"
	ReasonAdditionalAgents           = "AdditionalAgents"

	// Validated reasons.
	ReasonValidationsPassing     = "ValidationsPassing"
	ReasonValidationsUnknown     = "ValidationsUnknown"
	ReasonValidationsFailing     = "ValidationsFailing"
	ReasonValidationsUserPending = "ValidationsUserPending"

	// Completed reasons.
	ReasonInstallationCompleted  = "InstallationCompleted"
	ReasonInstallationFailed     = "InstallationFailed"
	ReasonInstallationNotStarted = "InstallationNotStarted"
	ReasonInstallationOnHold     = "InstallationOnHold"
	ReasonInstallationInProgress = "InstallationInProgress"
	ReasonUnknownStatus          = "UnknownStatus"

	// Failed reasons (besides ReasonInstallationFailed).
	ReasonInstallationNotFailed = "InstallationNotFailed"

	// Stopped reasons (besides ReasonInstallationFailed and
	// ReasonInstallationCompleted).
	ReasonInstallationCancelled  = "InstallationCancelled"
	ReasonInstallationNotStopped = "InstallationNotStopped"

	// ReasonNotAvailable: the service has no information yet.
	ReasonNotAvailable = "NotAvailable"

	// LastInstallationPreparationFailed reasons; upstream uses sentences.
	ReasonLastPreparationOK      = "There is no failing prior preparation attempt"
	ReasonLastPreparationFailed  = "The last installation preparation failed"
	ReasonLastPreparationPending = "Cluster preparation has never been performed for this cluster"
)

// assisted-service cluster states, as reported in DebugInfo.State.
const (
	ClusterStateInsufficient                = "insufficient"
	ClusterStateReady                       = "ready"
	ClusterStateError                       = "error"
	ClusterStatePreparingForInstallation    = "preparing-for-installation"
	ClusterStatePendingForInput             = "pending-for-input"
	ClusterStateInstalling                  = "installing"
	ClusterStateInstallingPendingUserAction = "installing-pending-user-action"
	ClusterStateFinalizing                  = "finalizing"
	ClusterStateInstalled                   = "installed"
	ClusterStateAddingHosts                 = "adding-hosts"
	ClusterStateCancelled                   = "cancelled"
)

// Machine pool names.
const (
	MasterAgentMachinePool = "master"
	WorkerAgentMachinePool = "worker"
)

const (
	// AgentClusterInstallKind is the kind a ClusterDeployment's
	// spec.clusterInstallRef names.
	AgentClusterInstallKind = "AgentClusterInstall"

	// InstallConfigOverridesAnnotation on an AgentClusterInstall holds JSON
	// merged into the generated install-config.
	InstallConfigOverridesAnnotation = "agent-install.openshift.io/install-config-overrides"
)
