package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// version of this agent, reported at registration.
const version = "paritylab-lab-agent/v1"

// discovery registers the host with its InfraEnv and runs the steps the
// service gives until it installs the host (which reboots) or is stopped.
type discovery struct {
	sys    *system
	cfg    agentapi.DiscoveryConfig
	client *client
	hostID string
	// serviceHost is where the guest reaches the host's services.
	serviceHost string
}

func runDiscovery(ctx context.Context, sys *system, cfg agentapi.DiscoveryConfig) error {
	host, err := sys.serviceHost(cfg.ServiceHost)
	if err != nil {
		return err
	}
	d := &discovery{sys: sys, cfg: cfg, client: newClient(host, cfg.ServicePort, cfg.Token), hostID: sys.hostID(), serviceHost: host}
	if d.hostID == "" {
		return errors.New("no SMBIOS system UUID to register with")
	}
	if err := sys.writeMirrorConfig(cfg); err != nil {
		return err
	}
	if err := d.register(ctx); err != nil {
		return err
	}
	return d.loop(ctx)
}

// register retries until the service answers: it may start after the host.
func (d *discovery) register(ctx context.Context) error {
	req := agentapi.RegisterRequest{HostID: d.hostID, DiscoveryAgentVersion: version}
	for {
		var h agentapi.Host
		err := d.client.do(ctx, http.MethodPost, agentapi.RegisterPath(d.cfg.InfraEnvID), req, &h)
		if err == nil {
			log.Printf("registered host %s with InfraEnv %s", d.hostID, d.cfg.InfraEnvID)
			return nil
		}
		var apiErr *agentapi.APIError
		if errors.As(err, &apiErr) && apiErr.Code >= 400 && apiErr.Code < 500 {
			return fmt.Errorf("registration refused: %w", err)
		}
		log.Printf("register: %v; retrying", err)
		if !sleep(ctx, 3*time.Second) {
			return ctx.Err()
		}
	}
}

// loop polls for instructions (which is also the heartbeat) and runs them.
func (d *discovery) loop(ctx context.Context) error {
	for {
		var ins agentapi.Instructions
		err := d.client.do(ctx, http.MethodGet, agentapi.InstructionsPath(d.cfg.InfraEnvID, d.hostID), nil, &ins)
		wait := 5 * time.Second
		if err != nil {
			log.Printf("instructions: %v", err)
		} else {
			if ins.NextInstructionSeconds > 0 {
				wait = time.Duration(ins.NextInstructionSeconds) * time.Second
			}
			for _, step := range ins.Instructions {
				if done, err := d.run(ctx, step); done || err != nil {
					return err
				}
			}
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

// run performs one step; done means the agent's work here is over.
func (d *discovery) run(ctx context.Context, step agentapi.Step) (done bool, err error) {
	switch step.StepType {
	case agentapi.StepInventory:
		inv, err := json.Marshal(d.sys.inventory())
		if err != nil {
			return false, err
		}
		return false, d.reply(ctx, step, 0, string(inv), "")
	case agentapi.StepInstall:
		var args agentapi.InstallArgs
		if err := json.Unmarshal(step.Args, &args); err != nil {
			return false, d.reply(ctx, step, 1, "", "bad install arguments: "+err.Error())
		}
		if err := d.reply(ctx, step, 0, "", ""); err != nil {
			return false, err
		}
		return true, d.install(ctx, args)
	case agentapi.StepStop:
		log.Printf("service stopped this host's agent")
		return true, nil
	}
	return false, d.reply(ctx, step, 1, "", "unknown step type "+step.StepType)
}

func (d *discovery) reply(ctx context.Context, step agentapi.Step, code int, output, errText string) error {
	r := agentapi.StepReply{StepID: step.StepID, StepType: step.StepType, ExitCode: code, Output: output, Error: errText}
	return d.client.do(ctx, http.MethodPost, agentapi.InstructionsPath(d.cfg.InfraEnvID, d.hostID), r, nil)
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
