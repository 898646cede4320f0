package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"os"
	"syscall"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// install pulls the images the installer pulls, writes the node image to
// the install disk (what coreos-installer does), puts the node config after it, and reboots into it, unless the
// ironic agent booted the host: then this agent stops there, the deploy
// step returns, and the ironic agent powers the host off in band (its
// power_off command, which Ironic sends after the step) for Ironic to
// boot the disk.
func (d *discovery) install(ctx context.Context, args agentapi.InstallArgs) error {
	stage := func(s agentv1beta1.HostStage, info string) {
		if err := d.client.progress(ctx, d.cfg.InfraEnvID, d.hostID, string(s), info); err != nil {
			log.Printf("report %s: %v", s, err)
		}
	}
	stage(agentv1beta1.HostStageStartingInstallation, args.Role)
	stage(agentv1beta1.HostStageInstalling, args.Role)
	if err := d.pullImages(ctx, args.Pulls); err != nil {
		stage(agentv1beta1.HostStageFailed, err.Error())
		return err
	}
	if err := d.writeImage(ctx, args, func(pct int) {
		stage(agentv1beta1.HostStageWritingImageToDisk, fmt.Sprintf("%d%%", pct))
	}); err != nil {
		stage(agentv1beta1.HostStageFailed, err.Error())
		return err
	}
	if err := writeConfigArea(args.InstallationDisk, args.Node); err != nil {
		stage(agentv1beta1.HostStageFailed, err.Error())
		return err
	}
	stage(agentv1beta1.HostStageRebooting, "")
	if d.cfg.IronicAgent {
		log.Printf("ironic agent present: the deploy step is done; powering off in band for Ironic")
		return restart(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	}
	return restart(syscall.LINUX_REBOOT_CMD_RESTART)
}

// writeImage streams the image onto the disk, hashing it on the way.
func (d *discovery) writeImage(ctx context.Context, args agentapi.InstallArgs, progress func(int)) error {
	disk, err := os.OpenFile(args.InstallationDisk, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open install disk: %w", err)
	}
	defer disk.Close()
	h := sha256.New()
	w := &progressWriter{w: io.MultiWriter(disk, h), report: progress}
	if _, err := d.client.download(ctx, args.ImagePath, w); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); args.ImageSHA256 != "" && got != args.ImageSHA256 {
		return fmt.Errorf("node image checksum %s, want %s", got, args.ImageSHA256)
	}
	progress(100)
	return disk.Sync()
}

// progressWriter reports every 25% of a stream of unknown length by MiB
// count; good enough for the install stage's progress info.
type progressWriter struct {
	w       io.Writer
	n       int64
	last    int64
	report  func(int)
	percent int
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.n-p.last >= 8<<20 && p.percent < 75 {
		p.last = p.n
		p.percent += 25
		p.report(p.percent)
	}
	return n, err
}

// restart reboots or powers off the machine (cmd, a reboot syscall
// command): sync, then the syscall (as PID 1's child the agent may do
// this; busybox reboot would need init's help).
func restart(cmd int) error {
	syscall.Sync()
	if os.Getenv("PARITYLAB_AGENT_NO_REBOOT") != "" {
		log.Printf("reboot suppressed (test)")
		return nil
	}
	return syscall.Reboot(cmd)
}
