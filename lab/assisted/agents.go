package assisted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// infraEnvByID finds the InfraEnv whose UID is the agent API's InfraEnv ID.
func (s *Service) infraEnvByID(ctx context.Context, id string) (*agentv1beta1.InfraEnv, error) {
	list := &agentv1beta1.InfraEnvList{}
	if err := s.client.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if string(list.Items[i].UID) == id {
			return &list.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no such InfraEnv")
}

// ensureAgent creates the Agent of a registering host, owned by its
// InfraEnv (deleting the InfraEnv deletes its agents); a host registering
// again (it rebooted) keeps its Agent.
func (s *Service) ensureAgent(ctx context.Context, ie *agentv1beta1.InfraEnv, hostID, version string) error {
	agent := &agentv1beta1.Agent{}
	err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: ie.Namespace, Name: hostID}, agent)
	if err == nil {
		if agent.Labels[agentv1beta1.InfraEnvNameLabel] != ie.Name {
			return &conflictError{msg: fmt.Sprintf("host %s is registered with InfraEnv %q", hostID, agent.Labels[agentv1beta1.InfraEnvNameLabel])}
		}
		return s.reregister(ctx, agent)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	agent = &agentv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{
			Name: hostID, Namespace: ie.Namespace,
			Labels: map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name},
		},
	}
	for k, v := range ie.Spec.AgentLabels {
		agent.Labels[k] = v
	}
	if ref := ie.Spec.ClusterRef; ref != nil {
		agent.Spec.ClusterDeploymentName = &agentv1beta1.ClusterReference{Name: ref.Name, Namespace: ref.Namespace}
	}
	if err := controllerutil.SetOwnerReference(ie, agent, s.client.Scheme()); err != nil {
		return err
	}
	if err := s.client.Create(ctx, agent); err != nil {
		return err
	}
	// A host of an InfraEnv of no cluster registers discovering-unbound
	// (upstream's pool host state machine), the state the Agent
	// controller gives it too: "discovering" would flicker in between.
	bound := agent.Spec.ClusterDeploymentName != nil
	return s.patchAgentStatus(ctx, ie.Namespace, hostID, func(st *agentv1beta1.AgentStatus) {
		st.DebugInfo.State = preInstallState(agent, false, bound)
		st.DebugInfo.StateInfo = "Waiting for the host's inventory"
	})
}

// agentOf finds a registered host's Agent. It reads the API server, not the
// cache: a host answers its first step right after registering, and the
// service's database would already know it (the cache may not yet).
func (s *Service) agentOf(ctx context.Context, hostID string) (*agentv1beta1.Agent, error) {
	list := &agentv1beta1.AgentList{}
	if err := s.apiReader.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Name == hostID {
			return &list.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no Agent for host %s", hostID)
}

// recordInventory stores what the host measured on its Agent.
func (s *Service) recordInventory(ctx context.Context, hostID, output string) error {
	var inv agentv1beta1.HostInventory
	dec := json.NewDecoder(bytes.NewReader([]byte(output)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		return &badInputError{msg: fmt.Sprintf("inventory is not a host inventory: %v", err)}
	}
	if inv.CPU.Count <= 0 || inv.Memory.PhysicalBytes <= 0 {
		return &badInputError{msg: "inventory reports no CPUs or no memory"}
	}
	normalizeInventory(&inv)
	agent, err := s.agentOf(ctx, hostID)
	if err != nil {
		return err
	}
	return s.patchAgentStatus(ctx, agent.Namespace, agent.Name, func(st *agentv1beta1.AgentStatus) {
		st.Inventory = inv
	})
}

// progressRefused are the states past the install in which
// assisted-service refuses a host's progress report (host.Manager's
// UpdateInstallProgress takes it only while installing): an installed
// host that boots again (a power cycle) must not go back to installing,
// where the BMAC would take it for a day-2 host.
var progressRefused = map[string]bool{
	agentv1beta1.AgentStateInstalled: true, agentv1beta1.AgentStateAddedToExistingCluster: true, agentv1beta1.AgentStateError: true,
}

// recordStage stores an install stage reported by the host.
func (s *Service) recordStage(ctx context.Context, hostID, stage, info string) error {
	agent, err := s.agentOf(ctx, hostID)
	if err != nil {
		return err
	}
	if st := agent.Status.DebugInfo.State; progressRefused[st] {
		return &conflictError{msg: fmt.Sprintf("host %s is %s: install progress is taken only while the host installs", hostID, st)}
	}
	now := metav1.Now()
	err = s.patchAgentStatus(ctx, agent.Namespace, agent.Name, func(st *agentv1beta1.AgentStatus) {
		if st.Progress.CurrentStage != agentv1beta1.HostStage(stage) {
			st.Progress.StageStartTime = &now
		}
		st.Progress.CurrentStage = agentv1beta1.HostStage(stage)
		st.Progress.ProgressInfo = info
		st.Progress.StageUpdateTime = &now
		st.Progress.InstallationPercentage = stagePercent(stage)
	})
	if err != nil {
		return err
	}
	s.events.add(agent.Namespace, agent.Name, "Host %s: %s %s", hostID, stage, info)
	if stage == string(agentv1beta1.HostStageJoined) {
		// Not on the agent's request: the node may take a moment to show.
		go func() {
			if err := s.labelJoinedNode(context.WithoutCancel(ctx), agent); err != nil {
				s.opts.Logger.Error(err, "Label joined node", "agent", agent.Name)
			}
		}()
	}
	return nil
}

// patchAgentStatus applies a change to an Agent's status, retrying on
// conflicts with the reconcilers that write it too.
func (s *Service) patchAgentStatus(ctx context.Context, ns, name string, change func(*agentv1beta1.AgentStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		agent := &agentv1beta1.Agent{}
		if err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, agent); err != nil {
			return err
		}
		change(&agent.Status)
		return s.client.Status().Update(ctx, agent)
	})
}

// The install stages and how far along each is.
var stages = []agentv1beta1.HostStage{
	agentv1beta1.HostStageStartingInstallation, agentv1beta1.HostStageInstalling,
	agentv1beta1.HostStageWritingImageToDisk, agentv1beta1.HostStageRebooting,
	agentv1beta1.HostStageConfiguring, agentv1beta1.HostStageJoined, agentv1beta1.HostStageDone,
}

func knownStage(stage string) bool {
	if stage == string(agentv1beta1.HostStageFailed) {
		return true
	}
	for _, s := range stages {
		if string(s) == stage {
			return true
		}
	}
	return false
}

func stagePercent(stage string) int64 {
	for i, s := range stages {
		if string(s) == stage {
			return int64(100 * (i + 1) / len(stages))
		}
	}
	return 0
}

// connected says whether a host called recently.
func (s *Service) connected(hostID string) bool {
	seen := s.registry.lastSeen(hostID)
	return !seen.IsZero() && time.Since(seen) < s.opts.HeartbeatTimeout
}

// normalizeInventory turns absent lists into empty ones: the Agent schema
// requires them, as assisted-service's does.
func normalizeInventory(inv *agentv1beta1.HostInventory) {
	for i := range inv.Interfaces {
		nic := &inv.Interfaces[i]
		for _, l := range []*[]string{&nic.Flags, &nic.IPv4Addresses, &nic.IPv6Addresses} {
			if *l == nil {
				*l = []string{}
			}
		}
	}
	for i := range inv.Disks {
		if inv.Disks[i].InstallationEligibility.NotEligibleReasons == nil {
			inv.Disks[i].InstallationEligibility.NotEligibleReasons = []string{}
		}
	}
}
