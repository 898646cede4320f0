// Package agent reconciles the Agents that hosts of OpenshiftAssistedConfig
// Machines become: an Agent is traced to its Machine through the InfraEnv
// it booted (named after the Machine, owned by its config), gets the role
// of its Machine, the config's host name, node labels and kubelet provider
// ID, and is approved — exactly one Agent per Machine, the oldest, so a
// host that registers twice cannot be installed twice.
//
// It must not import anything of the lab.
package agent
