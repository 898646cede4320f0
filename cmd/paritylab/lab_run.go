package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/machines"
)

// runOptions are the flags of `lab up` that the supervisor also takes.
type runOptions struct {
	logDir       string
	profile      string
	hosts        int
	hostCPUs     uint
	hostMemory   uint
	hostDisk     uint64
	hostFirmware string
	accel        string
	// machineController is the upstream bare-metal machine controller
	// binary, if any.
	machineController string
	// hostedClusters runs the HyperShift operator stand-in.
	hostedClusters bool
}

func (o *runOptions) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.logDir, "log-dir", "", "where component logs go (default <state-dir>/logs, removed by lab down)")
	fl.StringVar(&o.profile, "profile", lab.ProfileLocal, "lab profile: local or kind")
	fl.IntVar(&o.hosts, "hosts", 0, "how many virtual bare-metal hosts (libvirt domains behind Redfish BMCs) to create")
	fl.UintVar(&o.hostCPUs, "host-cpus", 1, "vCPUs per host")
	fl.UintVar(&o.hostMemory, "host-memory", 1024, "memory per host, MiB")
	fl.Uint64Var(&o.hostDisk, "host-disk", 20, "disk per host, GiB (sparse)")
	fl.StringVar(&o.hostFirmware, "host-firmware", string(machines.FirmwareBIOS), "host firmware: bios or uefi")
	fl.StringVar(&o.accel, "accel", "", "kvm or tcg; default: probe KVM with a timed boot (cached) and fall back to TCG")
	fl.BoolVar(&o.hostedClusters, "hosted-clusters", false, "run the HyperShift operator stand-in on the hub: HostedClusters and NodePools on the agent platform, each hosted control plane a local one")
	fl.StringVar(&o.machineController, "machine-controller", "", "upstream bare-metal machine controller binary (cmd/manager of openshift/cluster-api-provider-baremetal) each workload cluster's machine API runs as a process; default: the lab's in-process port")
}

// args renders the options as flags again, for the detached supervisor.
func (o *runOptions) args() []string {
	return []string{
		"--profile", o.profile, "--hosts", strconv.Itoa(o.hosts),
		"--host-cpus", strconv.FormatUint(uint64(o.hostCPUs), 10),
		"--host-memory", strconv.FormatUint(uint64(o.hostMemory), 10),
		"--host-disk", strconv.FormatUint(o.hostDisk, 10),
		"--host-firmware", o.hostFirmware, "--accel", o.accel,
		"--machine-controller", absPath(o.machineController),
		"--hosted-clusters=" + strconv.FormatBool(o.hostedClusters),
	}
}

// absPath makes a path given on the command line absolute, for a
// supervisor that may not share this command's working directory.
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func (o *runOptions) labOptions(stateDir string, progress lab.Progress) lab.Options {
	return lab.Options{
		StateDir: stateDir, LogDir: o.logDir, Profile: o.profile, Progress: progress,
		Hosts: o.hosts, Accel: o.accel, MachineController: o.machineController, HostedClusters: o.hostedClusters,
		Host: machines.HostSpec{VCPUs: o.hostCPUs, MemoryMiB: o.hostMemory, DiskGiB: o.hostDisk, Firmware: machines.Firmware(o.hostFirmware)},
	}
}

// progressFD is the descriptor on which a detached supervisor reports
// progress to the `lab up` that started it.
const progressFD = 3

func newLabRunCommand(flags *labFlags) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:    "run",
		Short:  "Run a lab in this process until SIGINT/SIGTERM (the supervisor `lab up` starts)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stateDir, err := flags.resolveStateDir()
			if err != nil {
				return err
			}
			stream := os.NewFile(progressFD, "progress")
			defer stream.Close()
			return superviseLab(stateDir, opts, newStreamProgress(stream), func() {
				newStreamProgress(stream).send(progressEvent{Phase: "ready"})
				stream.Close()
			})
		},
	}
	opts.register(cmd)
	return cmd
}

// superviseLab brings the lab up, calls ready, serves until SIGINT or
// SIGTERM, and tears the lab down. A signal during Up aborts it (Up undoes
// its own steps).
func superviseLab(stateDir string, opts *runOptions, progress lab.Progress, ready func()) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	l, err := lab.Up(ctx, opts.labOptions(stateDir, progress))
	if err != nil {
		return err
	}
	ready()
	<-ctx.Done()
	stop()
	downCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := l.Down(downCtx); err != nil {
		return fmt.Errorf("tear down: %w", err)
	}
	return nil
}
