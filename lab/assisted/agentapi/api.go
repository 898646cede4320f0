package agentapi

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// BasePath of the agent API.
const BasePath = "/api/assisted-install/v2"

// AuthHeader carries the InfraEnv token ("Bearer <token>").
const AuthHeader = "Authorization"

// Paths.
func RegisterPath(infraEnv string) string {
	return BasePath + "/infra-envs/" + url.PathEscape(infraEnv) + "/hosts"
}

func hostPath(infraEnv, host string) string {
	return RegisterPath(infraEnv) + "/" + url.PathEscape(host)
}

// InstructionsPath is GET (next steps, also the heartbeat) and POST (a
// step reply).
func InstructionsPath(infraEnv, host string) string {
	return hostPath(infraEnv, host) + "/instructions"
}

// ProgressPath is PUT with a Progress.
func ProgressPath(infraEnv, host string) string { return hostPath(infraEnv, host) + "/progress" }

// RegisterRequest is the body of a registration.
type RegisterRequest struct {
	// HostID is the host's SMBIOS system UUID.
	HostID string `json:"host_id"`
	// DiscoveryAgentVersion is the agent's version.
	DiscoveryAgentVersion string `json:"discovery_agent_version"`
}

// Host is the service's answer to a registration.
type Host struct {
	ID         string `json:"id"`
	InfraEnvID string `json:"infra_env_id"`
	Status     string `json:"status"`
}

// Step types.
const (
	// StepInventory asks for a fresh inventory.
	StepInventory = "inventory"
	// StepInstall asks the host to install itself (InstallArgs).
	StepInstall = "install"
	// StepStop tells the agent to stop polling (the host was removed).
	StepStop = "stop"
)

// Instructions are the next steps and when to ask again.
type Instructions struct {
	NextInstructionSeconds int    `json:"next_instruction_seconds"`
	Instructions           []Step `json:"instructions"`
}

// Step is one thing the service asks the agent to do.
type Step struct {
	StepID   string          `json:"step_id"`
	StepType string          `json:"step_type"`
	Args     json.RawMessage `json:"args,omitempty"`
}

// StepReply is the agent's answer to a step.
type StepReply struct {
	StepID   string `json:"step_id"`
	StepType string `json:"step_type"`
	ExitCode int    `json:"exit_code"`
	// Output is the step's result (the inventory JSON for StepInventory).
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

// Progress reports an install stage.
type Progress struct {
	CurrentStage string `json:"current_stage"`
	ProgressInfo string `json:"progress_info,omitempty"`
}

// APIError is the body of every error answer.
type APIError struct {
	Code   int    `json:"code"`
	Reason string `json:"reason"`
}

func (e *APIError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Reason) }
