// Package agentapi is the wire contract between the lab's assisted service
// and lab-agent, the agent in the lab's guest images. Its paths and shapes
// follow the assisted-service agent API (register a host in an InfraEnv,
// poll for instructions, reply to steps, report install progress); the
// inventory is the Agent CRD's inventory structure, so the service stores
// what the guest measured unchanged.
//
// It imports only API types; cmd/lab-agent, which runs inside guests, and
// lab/assisted both use it.
package agentapi
