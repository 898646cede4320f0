package agentmachine

import (
	"context"
	"fmt"
	"strings"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// notYetReservedMessage is the message of the four mirrored conditions
// while no Agent is reserved (upstream L629-652).
const notYetReservedMessage = "Agent not yet reserved"

// mirrored pairs each mirrored AgentMachine condition with the Agent
// condition it copies (upstream L666-669).
var mirrored = []struct {
	condition string
	agent     conditionsv1.ConditionType
}{
	{capiagentv1.AgentSpecSyncedCondition, agentv1.ConditionSpecSynced},
	{capiagentv1.AgentValidatedCondition, agentv1.ConditionValidated},
	{capiagentv1.AgentRequirementsMetCondition, agentv1.ConditionRequirementsMet},
	{capiagentv1.InstalledCondition, agentv1.ConditionInstalled},
}

// summarised are the conditions Ready summarises (upstream L760-767).
var summarised = []string{
	capiagentv1.AgentReservedCondition,
	capiagentv1.AgentSpecSyncedCondition,
	capiagentv1.AgentValidatedCondition,
	capiagentv1.AgentRequirementsMetCondition,
	capiagentv1.InstalledCondition,
}

// ownedConditions are the conditions this controller writes.
var ownedConditions = append([]string{clusterv1.ReadyCondition}, summarised...)

// reconcileStatus writes the conditions, the Ready summary and
// status.ready (rule 11, upstream L625-672). searchErr is why no Agent
// could be reserved, if one was not. With an Agent reserved it also makes
// sure the Agent carries the agentMachineRef label.
func (r *Reconciler) reconcileStatus(ctx context.Context, s *scope, searchErr error) error {
	am := s.agentMachine
	am.Status.Ready = false
	if am.Status.AgentRef == nil {
		setNotReserved(am, searchErr)
		return setReady(am)
	}
	conditions.Set(am, metav1.Condition{
		Type: capiagentv1.AgentReservedCondition, Status: metav1.ConditionTrue, Reason: capiagentv1.AgentReservedReason,
	})
	agent, err := r.boundAgent(ctx, am)
	if err != nil {
		return err
	}
	if err := r.ensureAgentLabeled(ctx, am, agent); err != nil {
		return err
	}
	for _, m := range mirrored {
		conditions.Set(am, mirror(agent, m.condition, m.agent))
	}
	return setReady(am)
}

// setNotReserved sets AgentReserved False (NoSuitableAgents when the
// search found nothing eligible, AgentNotYetFound with the error when it
// failed) and the four mirrored conditions False/AgentNotYetFound.
func setNotReserved(am *capiagentv1.AgentMachine, searchErr error) {
	reserved := metav1.Condition{
		Type: capiagentv1.AgentReservedCondition, Status: metav1.ConditionFalse, Reason: capiagentv1.NoSuitableAgentsReason,
	}
	if searchErr != nil {
		reserved.Reason, reserved.Message = capiagentv1.AgentNotYetFoundReason, searchErr.Error()
	}
	conditions.Set(am, reserved)
	for _, m := range mirrored {
		conditions.Set(am, metav1.Condition{
			Type: m.condition, Status: metav1.ConditionFalse, Reason: capiagentv1.AgentNotYetFoundReason, Message: notYetReservedMessage,
		})
	}
}

// mirror copies one Agent condition (upstream L700-729): True becomes
// True/AgentConditionTrue; a missing one False/ConditionNotFound; any
// other status False with the Agent's reason and message.
func mirror(agent *agentv1.Agent, condition string, agentCondition conditionsv1.ConditionType) metav1.Condition {
	c := conditionsv1.FindStatusCondition(agent.Status.Conditions, agentCondition)
	switch {
	case c == nil:
		return metav1.Condition{Type: condition, Status: metav1.ConditionFalse, Reason: capiagentv1.ConditionNotFoundReason}
	case c.Status == corev1.ConditionTrue:
		return metav1.Condition{Type: condition, Status: metav1.ConditionTrue, Reason: capiagentv1.AgentConditionTrueReason}
	default:
		return metav1.Condition{Type: condition, Status: metav1.ConditionFalse, Reason: c.Reason, Message: c.Message}
	}
}

// setReady summarises the five conditions into Ready and sets status.ready
// from it (upstream L759-777).
func setReady(am *capiagentv1.AgentMachine) error {
	if err := conditions.SetSummaryCondition(am, am, clusterv1.ReadyCondition, conditions.ForConditionTypes(summarised)); err != nil {
		return fmt.Errorf("summarise the Ready condition: %w", err)
	}
	am.Status.Ready = conditions.IsTrue(am, clusterv1.ReadyCondition)
	return nil
}

// ensureAgentLabeled puts agentMachineRef=<AgentMachine name> back on the
// reserved Agent if it lacks it (upstream L683-698).
func (r *Reconciler) ensureAgentLabeled(ctx context.Context, am *capiagentv1.AgentMachine, agent *agentv1.Agent) error {
	if agent.Labels[capiagentv1.AgentMachineRefLabelKey] == am.Name {
		return nil
	}
	base := agent.DeepCopy()
	metav1.SetMetaDataLabel(&agent.ObjectMeta, capiagentv1.AgentMachineRefLabelKey, am.Name)
	if err := r.Client.Patch(ctx, agent, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("label Agent %s with %s: %w", agent.Name, capiagentv1.AgentMachineRefLabelKey, err)
	}
	return nil
}

// setAgentRef records the Agent bound to an AgentMachine: provider ID,
// agentRef and addresses (rule 8, upstream L491-496). The addresses are
// taken once, at binding, as upstream does.
func setAgentRef(am *capiagentv1.AgentMachine, agent *agentv1.Agent) {
	am.Spec.ProviderID = ptr.To("agent://" + agent.Name)
	am.Status.AgentRef = &capiagentv1.AgentReference{Name: agent.Name, Namespace: agent.Namespace}
	am.Status.Addresses = addresses(agent)
}

// addresses are an ExternalIP for each IPv4 address of each interface with
// a carrier, without its prefix length, then an InternalDNS: the requested
// host name, else the one in the inventory (upstream L779-803).
//
// Two departures, for inputs upstream cannot handle: upstream slices up to
// the last "/" and so panics on an address without one, which is taken
// whole here; and with no host name at all upstream still adds an empty
// InternalDNS, which the CRD rejects (address has minLength 1), so that
// no status can be written again; here the InternalDNS is left out.
// Agents report a host name in their inventory as soon as they register.
func addresses(agent *agentv1.Agent) []clusterv1.MachineAddress {
	var out []clusterv1.MachineAddress
	for _, iface := range agent.Status.Inventory.Interfaces {
		if !iface.HasCarrier {
			continue
		}
		for _, cidr := range iface.IPv4Addresses {
			ip := cidr
			if i := strings.LastIndex(cidr, "/"); i >= 0 {
				ip = cidr[:i]
			}
			out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: ip})
		}
	}
	hostname := agent.Spec.Hostname
	if hostname == "" {
		hostname = agent.Status.Inventory.Hostname
	}
	if hostname == "" {
		return out
	}
	return append(out, clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: hostname})
}
