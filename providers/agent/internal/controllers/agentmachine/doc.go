// Package agentmachine reconciles AgentMachines, the infrastructure
// machines of the agent provider: it binds one eligible Agent (a host
// discovered by assisted-service) to each Machine, hands the Agent what
// the Machine's bootstrap data says about fetching its Ignition (machine
// config pool, token, headers), and reports the Agent's progress as the
// AgentMachine's conditions, Ready summary, status.ready, provider ID and
// addresses.
//
// The rules are those of openshift/cluster-api-provider-agent at 79696ce
// (controllers/agentmachine_controller.go, cited as "upstream L<n>"), as
// listed in docs/plans/hypershift.md §1; comments name the rule where the
// code applies it. Deletion (rule 12, agentmachine_controller_delete.go)
// holds the Machine at a pre-terminate hook until the Agent is unbound and
// back in discovery.
//
// It must not import anything of the lab.
package agentmachine
