// Command lab-agent runs inside the lab's guests. In a discovery image it
// registers the host with the lab's assisted service, reports its real
// inventory and installs the host when told to; in the installed node
// image it joins the workload cluster as a kubelet would.
//
//	lab-agent boot        decide from the image and its config sources
//	lab-agent inventory   print the inventory as JSON
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/providers/bootstrap/metadataref"
)

func main() {
	log.SetFlags(log.LstdFlags | log.LUTC)
	log.SetPrefix("lab-agent: ")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: lab-agent boot|inventory")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	sys := newSystem()
	var err error
	switch os.Args[1] {
	case "boot":
		err = boot(ctx, sys)
	case "inventory":
		err = json.NewEncoder(os.Stdout).Encode(sys.inventory())
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

// boot finds what to do: a discovery image registers (config baked in, or
// from a config-2 drive); a node image joins its cluster (config at the end
// of its disk, or from a config-2 drive). It retries until configured.
func boot(ctx context.Context, sys *system) error {
	kind := sys.read(strings.TrimPrefix(agentapi.ImageKindFile, "/"))
	log.Printf("booted a %s image", kind)
	for {
		var err error
		switch kind {
		case agentapi.ImageDiscovery:
			err = bootDiscovery(ctx, sys)
		case agentapi.ImageNode:
			err = bootNode(ctx, sys)
		default:
			return fmt.Errorf("unknown image kind %q in %s", kind, agentapi.ImageKindFile)
		}
		if err == nil {
			return nil
		}
		log.Printf("%v; retrying", err)
		if !sleep(ctx, 5*time.Second) {
			return ctx.Err()
		}
	}
}

func bootDiscovery(ctx context.Context, sys *system) error {
	var cfg agentapi.DiscoveryConfig
	raw, err := os.ReadFile(sys.path(agentapi.DiscoveryConfigFile))
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("discovery config: %w", err)
		}
	case errors.Is(err, os.ErrNotExist):
		ud, err := sys.readConfigDrive()
		if err != nil {
			return fmt.Errorf("no baked discovery config and %w", err)
		}
		if ud.Discovery == nil {
			return errors.New("config drive holds no discovery config")
		}
		cfg = *ud.Discovery
	default:
		return err
	}
	return runDiscovery(ctx, sys, cfg)
}

// bootNode joins the cluster with a node config from a config-2 drive
// (a provisioner's user data: MAPI's worker user data bootstraps its
// identity) or else from the end of the disk (an assisted install). The
// drive comes first: a disk may keep the config of an earlier install.
func bootNode(ctx context.Context, sys *system) error {
	disk := sys.bootDisk()
	cd, cdErr := sys.readConfigDriveFull()
	if cdErr == nil && cd.userData.Node != nil {
		cfg := *cd.userData.Node
		if cfg.Bootstrap {
			var err error
			if cfg, err = bootstrapNode(ctx, sys, disk, cfg, sha256Hex(cd.raw), cd.metaData); err != nil {
				return err
			}
		}
		return runNode(ctx, sys, cfg)
	}
	cfg, err := readConfigArea(disk)
	if errors.Is(err, errNoConfigArea) {
		if cdErr != nil {
			return fmt.Errorf("no node config on %s and %w", disk, cdErr)
		}
		return errors.New("config drive holds no node config")
	} else if err != nil {
		return err
	}
	if len(cfg.PointerIgnition) > 0 {
		if cfg, err = joinThroughPointer(ctx, sys, disk, cfg, cd.metaData); err != nil {
			return err
		}
	}
	return runNode(ctx, sys, withMetadata(cfg, cd.metaData))
}

// withMetadata resolves the kubelet settings that name config drive
// metadata variables (metadataref), as the boot units of a bootstrap
// provider's ignition do before the kubelet starts; without a drive they
// resolve empty, as unset variables.
func withMetadata(cfg agentapi.NodeConfig, meta map[string]string) agentapi.NodeConfig {
	env := metadataref.Env(meta)
	resolve := func(what, v string) string {
		out, err := metadataref.Resolve(v, env)
		if err != nil {
			log.Printf("node %s: %s %q: %v; left as it is", cfg.Name, what, v, err)
			return v
		}
		return out
	}
	cfg.ProviderID = resolve("provider ID", cfg.ProviderID)
	labels := make(map[string]string, len(cfg.Labels))
	for k, v := range cfg.Labels {
		labels[k] = resolve("label "+k, v)
	}
	cfg.Labels = labels
	return cfg
}

// bootDisk is the first disk that is not an optical drive.
func (s *system) bootDisk() string {
	for _, d := range s.disks() {
		if d.DriveType != "ODD" {
			return d.Path
		}
	}
	return "/dev/vda"
}
