package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/util"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/ignition"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// chooseAgent picks the one Agent of the Machine's InfraEnv to approve: the
// one already approved, else the oldest. The choice is the same from every
// Agent's reconcile, so at most one is ever approved.
func (r *Reconciler) chooseAgent(ctx context.Context, s *scope) (*agentv1.Agent, error) {
	list := &agentv1.AgentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.agent.Namespace),
		client.MatchingLabels{agentv1.InfraEnvNameLabel: s.infraEnv.Name}); err != nil {
		return nil, fmt.Errorf("list Agents of InfraEnv %s: %w", s.infraEnv.Name, err)
	}
	candidates := list.Items[:0]
	for _, a := range list.Items {
		if a.DeletionTimestamp.IsZero() {
			candidates = append(candidates, a)
		}
	}
	if len(candidates) == 0 {
		// The cache has not seen this Agent yet; it is the only one known.
		return s.agent, nil
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		a, b := &candidates[i], &candidates[j]
		if a.Spec.Approved != b.Spec.Approved {
			return a.Spec.Approved
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return &candidates[0], nil
}

// frozenStates are assisted-service host states past which the Agent's
// install settings no longer matter.
var frozenStates = map[string]bool{
	agentv1.AgentStateInstalling: true, agentv1.AgentStateInstallingInProgress: true,
	agentv1.AgentStateInstallingPendingUserAction: true, agentv1.AgentStateInstalled: true,
	agentv1.AgentStateAddedToExistingCluster: true, agentv1.AgentStateError: true,
}

// configure approves the Agent and sets what its Machine asks for.
func (r *Reconciler) configure(ctx context.Context, s *scope) error {
	if s.agent.Spec.Approved && frozenStates[s.agent.Status.DebugInfo.State] {
		return nil
	}
	desired := s.agent.DeepCopy()
	if err := r.desiredAgent(s, desired); err != nil {
		return err
	}
	if equalAgents(s.agent, desired) {
		return nil
	}
	if err := r.Client.Patch(ctx, desired, client.MergeFrom(s.agent)); err != nil {
		return fmt.Errorf("patch Agent %s: %w", s.agent.Name, err)
	}
	if !s.agent.Spec.Approved {
		ctrl.LoggerFrom(ctx).Info("Approved Agent", "Agent", s.agent.Name, "role", desired.Spec.Role)
	}
	return nil
}

func (r *Reconciler) desiredAgent(s *scope, a *agentv1.Agent) error {
	reg := s.config.Spec.NodeRegistration
	a.Spec.Approved = true
	a.Spec.Role = agentv1.HostRoleWorker
	if util.IsControlPlaneMachine(s.machine) {
		a.Spec.Role = agentv1.HostRoleMaster
	}
	if a.Spec.ClusterDeploymentName == nil && s.infraEnv.Spec.ClusterRef != nil {
		a.Spec.ClusterDeploymentName = s.infraEnv.Spec.ClusterRef.DeepCopy()
	}
	if reg.Name != "" {
		a.Spec.Hostname = reg.Name
	}
	override, err := ignition.Override(ignition.Options{ProviderID: reg.ProviderID, KubeletLabels: reg.KubeletExtraLabels})
	if err != nil {
		return err
	}
	a.Spec.IgnitionConfigOverrides = override
	if a.Spec.InstallerArgs, err = installerArgs(s.config.Spec.KernelArguments); err != nil {
		return err
	}
	// Like CAPOA's, no label or annotation: an Agent is traced to its
	// Machine through its InfraEnv, which the Machine owns.
	return nil
}

// installerArgs are the coreos-installer arguments that give the
// installed system the config's kernel arguments too, as CAPOA writes
// them: a JSON list of --<operation>-karg <value> pairs, "[]" for none.
// An argument without operation is appended, as the InfraEnv takes it.
func installerArgs(kargs []bootstrapv1.KernelArgument) (string, error) {
	args := make([]string, 0, 2*len(kargs))
	for _, k := range kargs {
		op := k.Operation
		if op == "" {
			op = "append"
		}
		args = append(args, "--"+op+"-karg", k.Value)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("installer args: %w", err)
	}
	return string(raw), nil
}

func equalAgents(a, b *agentv1.Agent) bool {
	return a.Spec.Approved == b.Spec.Approved && a.Spec.Role == b.Spec.Role && a.Spec.Hostname == b.Spec.Hostname &&
		a.Spec.IgnitionConfigOverrides == b.Spec.IgnitionConfigOverrides && a.Spec.InstallerArgs == b.Spec.InstallerArgs &&
		maps.Equal(a.Spec.NodeLabels, b.Spec.NodeLabels) &&
		(a.Spec.ClusterDeploymentName == nil) == (b.Spec.ClusterDeploymentName == nil)
}

func schemaGroup(apiVersion string) (string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return gv.Group, err
}
