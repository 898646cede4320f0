package assisted

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// afterInstallStages are the agent's stages once the installer wrote the
// disk and handed the reboot to whoever booted the host.
var afterInstallStages = []agentv1beta1.HostStage{agentv1beta1.HostStageRebooting,
	agentv1beta1.HostStageConfiguring, agentv1beta1.HostStageJoined, agentv1beta1.HostStageDone}

// DeployStepDone is the ironic agent's start_assisted_install deploy step
// (ironic-agent-image's ironic_coreos_install.py): it starts the assisted
// agent in the ramdisk the host booted and returns once the installer is
// done with the disk. The installer, finding the ironic agent, reports
// Rebooting and stops instead of rebooting, so the step ends at that
// stage; an install that failed fails the step. The host's Agent is the
// one labelled with its BareMetalHost.
func (s *Service) DeployStepDone(ctx context.Context, namespace, host, method string) (bool, error) {
	if method != AssistedDeployMethod {
		return false, fmt.Errorf("the discovery image's ironic agent has no deploy step %q (it has %s)", method, AssistedDeployMethod)
	}
	agents := &agentv1beta1.AgentList{}
	if err := s.client.List(ctx, agents, client.InNamespace(namespace), client.MatchingLabels{agentv1beta1.BareMetalHostLabel: host}); err != nil {
		return false, fmt.Errorf("list agents of BareMetalHost %s: %w", host, err)
	}
	for _, a := range agents.Items {
		stage := a.Status.Progress.CurrentStage
		if stage == agentv1beta1.HostStageFailed {
			return false, fmt.Errorf("%s: the installation of agent %s failed: %s", AssistedDeployMethod, a.Name, a.Status.Progress.ProgressInfo)
		}
		if slices.Contains(afterInstallStages, stage) {
			return true, nil
		}
	}
	return false, nil
}
