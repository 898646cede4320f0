package v1beta1

import (
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
)

// Condition types on Agents and InfraEnvs.
const (
	// ConditionSpecSynced: the spec was applied to assisted-service.
	ConditionSpecSynced conditionsv1.ConditionType = "SpecSynced"
	// ConditionConnected: the host's agent keeps contacting the service.
	ConditionConnected conditionsv1.ConditionType = "Connected"
	// ConditionRequirementsMet: the host is ready to be installed.
	ConditionRequirementsMet conditionsv1.ConditionType = "RequirementsMet"
	// ConditionValidated: the host's validations pass.
	ConditionValidated conditionsv1.ConditionType = "Validated"
	// ConditionInstalled: the host's installation completed.
	ConditionInstalled conditionsv1.ConditionType = "Installed"
	// ConditionBound: the Agent is bound to a ClusterDeployment.
	ConditionBound conditionsv1.ConditionType = "Bound"
	// ConditionCleanup: cleanup after unbinding or deletion failed or not.
	ConditionCleanup conditionsv1.ConditionType = "Cleanup"
	// ConditionImageCreated (InfraEnv): the discovery image is ready.
	ConditionImageCreated conditionsv1.ConditionType = "ImageCreated"
)

// Condition reasons.
const (
	// SpecSynced reasons.
	ReasonSyncOK       = "SyncOK"
	ReasonBackendError = "BackendError"
	ReasonInputError   = "InputError"

	// Connected reasons.
	ReasonAgentConnected    = "AgentIsConnected"
	ReasonAgentDisconnected = "AgentIsDisconnected"

	// RequirementsMet reasons.
	ReasonAgentReady               = "AgentIsReady"
	ReasonAgentNotReady            = "AgentNotReady"
	ReasonAgentAlreadyInstalling   = "AgentAlreadyInstalling"
	ReasonAgentNotApproved         = "AgentIsNotApproved"
	ReasonAgentInstallationStopped = "AgentInstallationStopped"

	// Validated reasons.
	ReasonValidationsPassing     = "ValidationsPassing"
	ReasonValidationsUnknown     = "ValidationsUnknown"
	ReasonValidationsFailing     = "ValidationsFailing"
	ReasonValidationsUserPending = "ValidationsUserPending"

	// Installed reasons.
	ReasonInstallationCompleted  = "InstallationCompleted"
	ReasonInstallationFailed     = "InstallationFailed"
	ReasonInstallationNotStarted = "InstallationNotStarted"
	ReasonInstallationInProgress = "InstallationInProgress"
	ReasonUnknownStatus          = "UnknownStatus"

	// ReasonNotAvailable: the service has no information yet.
	ReasonNotAvailable = "NotAvailable"

	// Bound reasons.
	ReasonBound                      = "Bound"
	ReasonUnbound                    = "Unbound"
	ReasonBinding                    = "Binding"
	ReasonUnbinding                  = "Unbinding"
	ReasonUnbindingPendingUserAction = "UnbindingPendingUserAction"

	// Cleanup reasons.
	ReasonCleanupFailed = "CleanupFailed"

	// ImageCreated reasons (InfraEnv). A built image is InfraEnvAvailable;
	// ImageCreated is what the condition says while the image is being
	// built.
	ReasonImageCreated       = "ImageCreated"
	ReasonInfraEnvAvailable  = "InfraEnvAvailable"
	ReasonImageCreationError = "ImageCreationError"
)

// Host roles, for AgentSpec.Role and AgentStatus.Role.
const (
	HostRoleAutoAssign HostRole = "auto-assign"
	HostRoleMaster     HostRole = "master"
	HostRoleWorker     HostRole = "worker"
	HostRoleBootstrap  HostRole = "bootstrap"
	HostRoleArbiter    HostRole = "arbiter"
)

// Host kinds, for AgentStatus.Kind.
const (
	HostKindHost                     = "Host"
	HostKindAddToExistingClusterHost = "AddToExistingClusterHost"
)

// Installation stages, for HostProgressInfo.CurrentStage.
const (
	HostStageStartingInstallation        HostStage = "Starting installation"
	HostStageWaitingForControlPlane      HostStage = "Waiting for control plane"
	HostStageStartWaitingForControlPlane HostStage = "Start Waiting for control plane"
	HostStageWaitingForBootkube          HostStage = "Waiting for bootkube"
	HostStageWaitingForController        HostStage = "Waiting for controller"
	HostStageInstalling                  HostStage = "Installing"
	HostStageWritingImageToDisk          HostStage = "Writing image to disk"
	HostStageRebooting                   HostStage = "Rebooting"
	HostStageWaitingForIgnition          HostStage = "Waiting for ignition"
	HostStageConfiguring                 HostStage = "Configuring"
	HostStageJoined                      HostStage = "Joined"
	HostStageDone                        HostStage = "Done"
	HostStageFailed                      HostStage = "Failed"
)

// NTP source states, for HostNTPSource.SourceState.
const (
	SourceStateSynced      SourceState = "synced"
	SourceStateCombined    SourceState = "combined"
	SourceStateNotCombined SourceState = "not_combined"
	SourceStateError       SourceState = "error"
	SourceStateVariable    SourceState = "variable"
	SourceStateUnreachable SourceState = "unreachable"
)

// assisted-service host states, as reported in AgentStatus.DebugInfo.State.
const (
	AgentStateDiscovering                 = "discovering"
	AgentStateKnown                       = "known"
	AgentStateDisconnected                = "disconnected"
	AgentStateInsufficient                = "insufficient"
	AgentStateDisabled                    = "disabled"
	AgentStatePreparingForInstallation    = "preparing-for-installation"
	AgentStatePreparingFailed             = "preparing-failed"
	AgentStatePreparingSuccessful         = "preparing-successful"
	AgentStatePendingForInput             = "pending-for-input"
	AgentStateInstalling                  = "installing"
	AgentStateInstallingInProgress        = "installing-in-progress"
	AgentStateInstallingPendingUserAction = "installing-pending-user-action"
	AgentStateResettingPendingUserAction  = "resetting-pending-user-action"
	AgentStateInstalled                   = "installed"
	AgentStateError                       = "error"
	AgentStateResetting                   = "resetting"
	AgentStateAddedToExistingCluster      = "added-to-existing-cluster"
	AgentStateCancelled                   = "cancelled"
	AgentStateBinding                     = "binding"
	AgentStateUnbinding                   = "unbinding"
	AgentStateUnbindingPendingUserAction  = "unbinding-pending-user-action"
	AgentStateKnownUnbound                = "known-unbound"
	AgentStateDisconnectedUnbound         = "disconnected-unbound"
	AgentStateInsufficientUnbound         = "insufficient-unbound"
	AgentStateDisabledUnbound             = "disabled-unbound"
	AgentStateDiscoveringUnbound          = "discovering-unbound"
	AgentStateReclaiming                  = "reclaiming"
	AgentStateReclaimingRebooting         = "reclaiming-rebooting"
)

// Labels, annotations and finalizers assisted-service sets or reads.
const (
	// InfraEnvNameLabel on an Agent (and on a BareMetalHost) names the
	// InfraEnv the host booted.
	InfraEnvNameLabel = "infraenvs.agent-install.openshift.io"

	// ClusterDeploymentNamespaceLabel on an Agent is the namespace of the
	// ClusterDeployment it is bound to.
	ClusterDeploymentNamespaceLabel = "agent-install.openshift.io/clusterdeployment-namespace"

	// BareMetalHostLabel on an Agent names the BareMetalHost it runs on.
	BareMetalHostLabel = "agent-install.openshift.io/bmh"

	// WatchResourceLabel marks Secrets and ConfigMaps assisted-service
	// watches.
	WatchResourceLabel = "agent-install.openshift.io/watch"

	// AgentDeprovisionFinalizer is put on Agents to deregister the host.
	AgentDeprovisionFinalizer = "agent.agent-install.openshift.io/ai-deprovision"

	// Inventory labels put on Agents from their reported hardware.
	InventoryLabelHasNonrotationalDisk = "inventory.agent-install.openshift.io/storage-hasnonrotationaldisk"
	InventoryLabelCPUArchitecture      = "inventory.agent-install.openshift.io/cpu-architecture"
	InventoryLabelCPUVirtEnabled       = "inventory.agent-install.openshift.io/cpu-virtenabled"
	InventoryLabelHostManufacturer     = "inventory.agent-install.openshift.io/host-manufacturer"
	InventoryLabelHostProductName      = "inventory.agent-install.openshift.io/host-productname"
	InventoryLabelHostIsVirtual        = "inventory.agent-install.openshift.io/host-isvirtual"

	// BareMetalHost annotations the BMAC controller copies onto the Agent.
	BMACRoleAnnotation                    = "bmac.agent-install.openshift.io/role"
	BMACHostnameAnnotation                = "bmac.agent-install.openshift.io/hostname"
	BMACMachineConfigPoolAnnotation       = "bmac.agent-install.openshift.io/machine-config-pool"
	BMACInstallerArgsAnnotation           = "bmac.agent-install.openshift.io/installer-args"
	BMACIgnitionConfigOverridesAnnotation = "bmac.agent-install.openshift.io/ignition-config-overrides"
)
