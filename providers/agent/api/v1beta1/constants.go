package v1beta1

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

// Finalizers the provider puts on its own objects. Upstream declares them in
// its controllers; they are here so that code outside the provider (the lab,
// scenarios) can recognise them.
const (
	// AgentMachineFinalizerName holds an AgentMachine until its Agent is
	// unbound. Its domain is assisted-service's API group.
	AgentMachineFinalizerName = "agentmachine.agent-install.openshift.io/deprovision"
	// AgentClusterFinalizerName holds a deleted AgentCluster until the
	// provider has seen the deletion, so that a paused one orphans its
	// ClusterDeployment before it goes. Upstream builds it as
	// "agentcluster" plus this API group with no dot between, and so does
	// this constant.
	AgentClusterFinalizerName = "agentcluster" + GroupName + "/deprovision"
)

// Labels and annotations the provider puts on objects, most of them of
// other APIs.
const (
	// AgentMachineRefLabelKey is the label on a bound Agent whose value is
	// the name of its AgentMachine. The provider also sets it before binding,
	// so that an interrupted bind can be resumed, and selects unbound Agents
	// by its absence.
	AgentMachineRefLabelKey = "agentMachineRef"
	// AgentMachineRefNamespace is the annotation on a bound Agent whose value
	// is the namespace of its AgentMachine.
	AgentMachineRefNamespace = "agentMachineRefNamespace"
	// AgentClusterRefLabel is the label on a ClusterDeployment whose value is
	// the name of the AgentCluster it belongs to. The provider finds an
	// AgentCluster's ClusterDeployment by it before creating one.
	AgentClusterRefLabel = "agentClusterRef"

	// MachineDeleteHookAnnotation is the pre-terminate hook the provider
	// puts on a Machine it backs: Cluster API holds the Machine's deletion
	// at it (after the drain, before the infrastructure is deleted) until
	// the provider has unbound the Agent and removes it.
	MachineDeleteHookAnnotation = clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/agentmachine"

	// BackupLabel marks objects that Open Cluster Management's hub backup
	// must include; the provider sets it to BackupLabelValue on
	// AgentMachines and on the Secrets it reads or writes for them.
	BackupLabel = "cluster.open-cluster-management.io/backup"
	// BackupLabelValue is the value of BackupLabel.
	BackupLabelValue = "true"
)
