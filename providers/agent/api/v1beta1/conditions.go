package v1beta1

// Condition types on AgentMachines. The Ready condition (Cluster API's
// clusterv1.ReadyCondition) summarises these five, and status.ready follows
// it.
//
// Upstream types them as Cluster API's ConditionType, which Cluster API
// deprecated with its v1beta1 conditions; here they are untyped string
// constants, usable as a metav1.Condition's Type and assignable to that type
// alike.
const (
	// AgentReservedCondition: an Agent is bound to the Machine.
	AgentReservedCondition = "AgentReserved"
	// AgentSpecSyncedCondition mirrors the bound Agent's SpecSynced condition.
	AgentSpecSyncedCondition = "AgentSpecSynced"
	// AgentValidatedCondition mirrors the bound Agent's Validated condition.
	AgentValidatedCondition = "AgentValidated"
	// AgentRequirementsMetCondition mirrors the bound Agent's RequirementsMet
	// condition.
	AgentRequirementsMetCondition = "AgentRequirementsMet"
	// InstalledCondition mirrors the bound Agent's Installed condition.
	InstalledCondition = "Installed"
)

// Condition reasons on AgentMachines. A mirrored condition that is False
// carries the Agent condition's own reason and message instead.
const (
	// AgentNotYetFoundReason: no Agent is bound yet. On AgentReserved, the
	// search for one failed (the message says why); on the four mirrored
	// conditions, the message is "Agent not yet reserved".
	AgentNotYetFoundReason = "AgentNotYetFound"
	// NoSuitableAgentsReason (AgentReserved False): the search succeeded but
	// no Agent was eligible.
	NoSuitableAgentsReason = "NoSuitableAgents"

	// Upstream's controller writes the reasons below as literals.

	// AgentReservedReason (AgentReserved True): an Agent is bound.
	AgentReservedReason = "AgentReserved"
	// AgentConditionTrueReason: the mirrored Agent condition is True.
	AgentConditionTrueReason = "AgentConditionTrue"
	// ConditionNotFoundReason: the bound Agent lacks the mirrored condition.
	ConditionNotFoundReason = "ConditionNotFound"
)
