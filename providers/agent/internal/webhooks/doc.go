// Package webhooks holds the agent infrastructure provider's validating
// admission webhooks. They are paritylab's additions: upstream
// (openshift/cluster-api-provider-agent) serves no webhook for v1beta1, so
// there a bad value is accepted and only the controllers trip over it.
// Here the API server refuses it with a message naming the field and what
// to write instead:
//
//   - an AgentMachine's, or an AgentMachineTemplate's, agentLabelSelector
//     must be a valid label selector (the controller lists Agents with it);
//   - an AgentMachineTemplate's spec is immutable, the rule Cluster API
//     sets for infrastructure machine templates;
//   - an AgentCluster's spec.ignitionEndpoint.url, when set, must be an
//     absolute http or https URL.
//
// Besides the template's immutable spec, an update is checked only when
// the field changed, so that an object written before the webhooks
// existed can still lose its finalizers.
//
// It must not import controller code or anything of the lab.
package webhooks
