package assisted

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

func setState(aci *hiveextv1beta1.AgentClusterInstall, state, info string) {
	aci.Status.DebugInfo.State, aci.Status.DebugInfo.StateInfo = state, info
}

// advance moves an install one step along its states.
func (s *Service) advance(ctx context.Context, in *install) (ctrl.Result, error) {
	aci := in.aci
	if importOnFirstSight(in) {
		return ctrl.Result{Requeue: true}, nil
	}
	switch aci.Status.DebugInfo.State {
	case "", hiveextv1beta1.ClusterStateInsufficient, hiveextv1beta1.ClusterStateReady:
		return s.advancePreInstall(ctx, in)
	case hiveextv1beta1.ClusterStatePreparingForInstallation:
		return s.prepare(ctx, in)
	case hiveextv1beta1.ClusterStateInstalling:
		if err := s.publishNoIngressKubeconfig(ctx, in); err != nil {
			return ctrl.Result{}, err
		}
		return s.advanceInstalling(in)
	case hiveextv1beta1.ClusterStateFinalizing:
		if err := s.publishNoIngressKubeconfig(ctx, in); err != nil {
			return ctrl.Result{}, err
		}
		return s.finalize(ctx, in)
	case hiveextv1beta1.ClusterStateInstalled:
		return s.handleInstalled(ctx, in)
	case hiveextv1beta1.ClusterStateAddingHosts:
		return s.addHosts(ctx, in)
	}
	return ctrl.Result{}, nil
}

func (s *Service) advancePreInstall(ctx context.Context, in *install) (ctrl.Result, error) {
	if err := s.assignRoles(ctx, in); err != nil {
		return ctrl.Result{}, err
	}
	if failed := failingMessages(networkingOf(in.aci).withHosts(in.agents).validations(in.agents)); len(failed) > 0 {
		setState(in.aci, hiveextv1beta1.ClusterStateInsufficient, "Cluster is not ready for install: "+strings.Join(failed, "; "))
		return ctrl.Result{}, nil
	}
	if ok, why := readiness(in); !ok {
		setState(in.aci, hiveextv1beta1.ClusterStateInsufficient, "Cluster is not ready for install: "+why)
		return ctrl.Result{}, nil
	}
	if in.aci.Spec.HoldInstallation {
		setState(in.aci, hiveextv1beta1.ClusterStateReady, "Cluster is ready for installation; it is held by spec.holdInstallation")
		return ctrl.Result{}, nil
	}
	setState(in.aci, hiveextv1beta1.ClusterStatePreparingForInstallation, "Preparing cluster for installation")
	s.events.add(in.aci.Namespace, in.aci.Name, "Cluster %s is ready; installation starts", in.cd.Name)
	return ctrl.Result{Requeue: true}, nil
}

// readiness says whether the bound, approved, validated hosts fill the
// cluster's provisioning requirements.
func readiness(in *install) (bool, string) {
	want := in.aci.Spec.ProvisionRequirements
	masters, workers := readyCounts(in.agents)
	switch {
	case masters < want.ControlPlaneAgents:
		return false, fmt.Sprintf("%d of %d required control-plane hosts are ready (approved and passing validations)", masters, want.ControlPlaneAgents)
	case masters > want.ControlPlaneAgents:
		return false, fmt.Sprintf("%d control-plane hosts are ready but the cluster wants %d", masters, want.ControlPlaneAgents)
	case workers < want.WorkerAgents:
		return false, fmt.Sprintf("%d of %d required worker hosts are ready (approved and passing validations)", workers, want.WorkerAgents)
	}
	return true, ""
}

func readyCounts(agents []agentv1beta1.Agent) (masters, workers int) {
	for i := range agents {
		a := &agents[i]
		if !conditionTrue(a, agentv1beta1.ConditionRequirementsMet) || !a.Spec.Approved {
			continue
		}
		if effectiveRole(a) == agentv1beta1.HostRoleMaster {
			masters++
		} else {
			workers++
		}
	}
	return masters, workers
}

func conditionTrue(a *agentv1beta1.Agent, t conditionsv1.ConditionType) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// assignRoles resolves auto-assign hosts: masters until the control plane
// is full, then workers, in hostname order.
func (s *Service) assignRoles(ctx context.Context, in *install) error {
	masters := 0
	for i := range in.agents {
		if in.agents[i].Spec.Role == agentv1beta1.HostRoleMaster {
			masters++
		}
	}
	for i := range in.agents {
		a := &in.agents[i]
		if a.Spec.Role != "" && a.Spec.Role != agentv1beta1.HostRoleAutoAssign {
			continue
		}
		role := agentv1beta1.HostRoleWorker
		if masters < in.aci.Spec.ProvisionRequirements.ControlPlaneAgents {
			role, masters = agentv1beta1.HostRoleMaster, masters+1
		}
		if a.Status.Role == role {
			continue
		}
		assign := func(st *agentv1beta1.AgentStatus) { assignRole(st, role) }
		assign(&a.Status)
		if err := s.patchAgentStatus(ctx, a.Namespace, a.Name, assign); err != nil {
			return err
		}
	}
	return nil
}

// assignRole gives a host its role and withdraws its readiness until the
// Agent controller has validated it for that role. Upstream assigns the
// role in the host refresh that then runs the validations; here the
// readiness an auto-assign host earned against worker requirements must
// not count it as a ready control-plane host (a 4-core host was once
// started as an SNO master when the ACI reconciled between the two).
func assignRole(st *agentv1beta1.AgentStatus, role agentv1beta1.HostRole) {
	st.Role = role
	conditionsv1.SetStatusConditionNoHeartbeat(&st.Conditions, conditionsv1.Condition{
		Type: agentv1beta1.ConditionRequirementsMet, Status: corev1.ConditionFalse, Reason: agentv1beta1.ReasonAgentNotReady,
		Message: fmt.Sprintf("The agent is not ready to begin the installation: its validations are re-running for role %s", role)})
}

// prepare creates the workload cluster and starts every host's install.
func (s *Service) prepare(ctx context.Context, in *install) (ctrl.Result, error) {
	spoke, err := s.opts.Spokes.Create(ctx, in.key(), configv1.Release{Version: in.release.Version, Image: in.release.Image})
	if err != nil {
		setACICondition(in.aci, hiveextv1beta1.ConditionLastInstallationPreparationFailed, true, "Error", "Preparing the cluster failed: "+err.Error())
		return ctrl.Result{RequeueAfter: installRecheck}, nil
	}
	if err := s.applyInstallManifests(ctx, in); err != nil {
		setACICondition(in.aci, hiveextv1beta1.ConditionLastInstallationPreparationFailed, true, "Error", "Preparing the cluster failed: "+err.Error())
		return ctrl.Result{RequeueAfter: installRecheck}, nil
	}
	setACICondition(in.aci, hiveextv1beta1.ConditionLastInstallationPreparationFailed, false, "Success", "The last installation preparation succeeded")
	bootstrap := true
	for i := range in.agents {
		a := &in.agents[i]
		if !conditionTrue(a, agentv1beta1.ConditionRequirementsMet) {
			continue
		}
		isBootstrap := bootstrap && effectiveRole(a) == agentv1beta1.HostRoleMaster
		if isBootstrap {
			bootstrap = false
		}
		if err := s.startInstall(ctx, in, a, spoke, isBootstrap, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	setState(in.aci, hiveextv1beta1.ClusterStateInstalling, "Installation in progress")
	return ctrl.Result{RequeueAfter: installRecheck}, nil
}

// startInstall queues a host's install step and marks it installing.
func (s *Service) startInstall(ctx context.Context, in *install, a *agentv1beta1.Agent, spoke Spoke, bootstrap, day2 bool) error {
	// The reconcile chose the host from its cache; what it did since
	// counts (waitsToInstallIn), checked first to spare the install
	// arguments and again as the host is claimed.
	fresh := &agentv1beta1.Agent{}
	if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(a), fresh); err != nil {
		return fmt.Errorf("read agent %s: %w", a.Name, err)
	}
	if !waitsToInstallIn(fresh, in.key()) {
		return nil
	}
	var args agentapi.InstallArgs
	var err error
	if day2 && in.aci.Spec.IgnitionEndpoint != nil {
		args, err = s.pointerInstallArgs(ctx, in, a)
	} else {
		args, err = s.installArgs(ctx, in, a, spoke, bootstrap)
	}
	if err != nil {
		return err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	kind := agentv1beta1.HostKindHost
	if day2 {
		kind = agentv1beta1.HostKindAddToExistingClusterHost
	}
	// The host is installing before it can learn so: the agent may report
	// its first progress as soon as it has the step, and that progress
	// must not be followed by the state it comes from.
	claimed, err := s.claimForInstall(ctx, in.key(), a, func(st *agentv1beta1.AgentStatus) {
		st.DebugInfo.State = agentv1beta1.AgentStateInstalling
		st.DebugInfo.StateInfo = "Installation is in progress"
		st.Bootstrap = bootstrap
		st.Kind = kind
	})
	if err != nil || !claimed {
		return err
	}
	s.registry.queue(a.Name, agentapi.StepInstall, raw)
	s.events.add(a.Namespace, a.Name, "Host %s: install started as %s", hostname(a), args.Role)
	return nil
}

// waitsToInstallIn says whether a host, as the API server has it, still
// waits to install in the cluster: bound to it and known. A reconcile
// working from an older cache must not start the install of a host that
// started it since (that sent a host reporting progress back to
// installing, and queued its install twice) nor of one unbound since (an
// unbound day-2 host sent to installing never went back to discovery).
func waitsToInstallIn(a *agentv1beta1.Agent, key ClusterKey) bool {
	ref := a.Spec.ClusterDeploymentName
	return ref != nil && ref.Namespace == key.Namespace && ref.Name == key.Name &&
		a.Status.DebugInfo.State == agentv1beta1.AgentStateKnown
}

// claimForInstall marks a host installing, as mark changes its status, if
// it still waits to install in the cluster when written; it says whether
// it did. Reading and writing under one resource version closes the
// window in which the host could be unbound or started by another
// reconcile.
func (s *Service) claimForInstall(ctx context.Context, key ClusterKey, a *agentv1beta1.Agent, mark func(*agentv1beta1.AgentStatus)) (bool, error) {
	claimed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := &agentv1beta1.Agent{}
		if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(a), fresh); err != nil {
			return err
		}
		if claimed = waitsToInstallIn(fresh, key); !claimed {
			return nil
		}
		mark(&fresh.Status)
		return s.client.Status().Update(ctx, fresh)
	})
	if err != nil {
		return false, fmt.Errorf("claim agent %s for its install: %w", a.Name, err)
	}
	return claimed, nil
}

// installArgs tells a host what to install and how its node joins.
func (s *Service) installArgs(ctx context.Context, in *install, a *agentv1beta1.Agent, spoke Spoke, bootstrap bool) (agentapi.InstallArgs, error) {
	args, err := s.diskInstallArgs(ctx, in, a)
	if err != nil {
		return agentapi.InstallArgs{}, err
	}
	args.Bootstrap = bootstrap
	name := hostname(a)
	cert, key, err := spoke.NodeCredentials(name)
	if err != nil {
		return agentapi.InstallArgs{}, fmt.Errorf("node credentials for %s: %w", name, err)
	}
	kubelet := kubeletSettingsFromOverrides(a.Spec.IgnitionConfigOverrides)
	labels := selfLabels(a.Spec.NodeLabels)
	maps.Copy(labels, selfLabels(kubelet.Labels))
	args.Node = agentapi.NodeConfig{
		Name: name, ProviderID: kubelet.ProviderID,
		Labels: labels, APIPort: spoke.APIPort(), TLSServerName: spoke.TLSServerName(),
		CACert: string(spoke.CACertPEM()), ClientCert: string(cert), ClientKey: string(key),
		KubeletVersion: spoke.KubernetesVersion(),
		Report:         args.Node.Report,
	}
	return args, nil
}

// diskInstallArgs are what every install writes, whatever the node then
// joins with: the node image, the disk, the images pulled first, and
// where the node reports its last stages (Node.Report).
func (s *Service) diskInstallArgs(ctx context.Context, in *install, a *agentv1beta1.Agent) (agentapi.InstallArgs, error) {
	img, err := s.ensureNodeImage()
	if err != nil {
		return agentapi.InstallArgs{}, err
	}
	ie, err := s.infraEnvOf(ctx, a)
	if err != nil {
		return agentapi.InstallArgs{}, err
	}
	ieID := string(ie.UID)
	return agentapi.InstallArgs{
		Role:             string(effectiveRole(a)),
		InstallationDisk: installDisk(a).Path,
		ImagePath:        agentapi.BasePath + "/infra-envs/" + ieID + "/downloads/node-image",
		ImageSHA256:      img.sha256,
		Pulls:            in.release.Pulls,
		Node: agentapi.NodeConfig{
			Report: &agentapi.ReportTarget{InfraEnvID: ieID, HostID: a.Name, Token: s.tokens.forInfraEnv(ieID), ServicePort: s.Port()},
		},
	}, nil
}

func (s *Service) infraEnvOf(ctx context.Context, a *agentv1beta1.Agent) (*agentv1beta1.InfraEnv, error) {
	ie := &agentv1beta1.InfraEnv{}
	name := a.Labels[agentv1beta1.InfraEnvNameLabel]
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, ie); err != nil {
		return nil, fmt.Errorf("InfraEnv %s of agent %s: %w", name, a.Name, err)
	}
	return ie, nil
}

// selfLabels are the node labels a node may set on itself (NodeRestriction
// forbids most kubernetes.io labels); the service sets the rest after join.
func selfLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if !restrictedLabel(k) {
			out[k] = v
		}
	}
	return out
}

func restrictedLabel(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return prefix == "kubernetes.io" || strings.HasSuffix(prefix, ".kubernetes.io") || prefix == "k8s.io" || strings.HasSuffix(prefix, ".k8s.io")
}

func (s *Service) advanceInstalling(in *install) (ctrl.Result, error) {
	if failed := failedHost(in.agents); failed != "" {
		setState(in.aci, hiveextv1beta1.ClusterStateError, "Installation failed: host "+failed+" failed")
		s.events.add(in.aci.Namespace, in.aci.Name, "Installation of %s failed on %s", in.cd.Name, failed)
		return ctrl.Result{}, nil
	}
	if allDone(in.agents, agentv1beta1.HostRoleMaster) {
		setState(in.aci, hiveextv1beta1.ClusterStateFinalizing, "Finalizing cluster installation")
	}
	return ctrl.Result{RequeueAfter: installRecheck}, nil
}

func failedHost(agents []agentv1beta1.Agent) string {
	for i := range agents {
		if agents[i].Status.Progress.CurrentStage == agentv1beta1.HostStageFailed {
			return hostname(&agents[i])
		}
	}
	return ""
}

// allDone says whether every installing host (of a role, or all when role
// is "") reported Done.
func allDone(agents []agentv1beta1.Agent, role agentv1beta1.HostRole) bool {
	for i := range agents {
		a := &agents[i]
		if a.Status.Kind == agentv1beta1.HostKindAddToExistingClusterHost || !installStates[a.Status.DebugInfo.State] {
			continue
		}
		if role != "" && effectiveRole(a) != role {
			continue
		}
		if a.Status.Progress.CurrentStage != agentv1beta1.HostStageDone {
			return false
		}
	}
	return true
}

func (s *Service) finalize(ctx context.Context, in *install) (ctrl.Result, error) {
	if failed := failedHost(in.agents); failed != "" {
		setState(in.aci, hiveextv1beta1.ClusterStateError, "Installation failed: host "+failed+" failed")
		return ctrl.Result{}, nil
	}
	if !allDone(in.agents, "") {
		return ctrl.Result{RequeueAfter: installRecheck}, nil
	}
	spoke := s.opts.Spokes.Get(in.key())
	if spoke == nil {
		return ctrl.Result{}, fmt.Errorf("workload cluster %s is gone", in.key())
	}
	if err := s.startMachineAPI(ctx, in, spoke); err != nil {
		return ctrl.Result{}, err
	}
	setState(in.aci, hiveextv1beta1.ClusterStateInstalled, "Cluster is installed")
	s.events.add(in.aci.Namespace, in.aci.Name, "Cluster %s installed", in.cd.Name)
	return s.handleInstalled(ctx, in)
}

// handleInstalled is assisted-service's handleClusterInstalled: the first
// pass over an installed cluster publishes its credentials, then reports
// it Completed (summarize), which hive reads; once installed by either
// account the cluster becomes a day-2 cluster that accepts more hosts
// (TransformClusterToDay2).
func (s *Service) handleInstalled(ctx context.Context, in *install) (ctrl.Result, error) {
	if !in.cd.Spec.Installed && !aciConditionReason(in.aci, hiveextv1beta1.ConditionCompleted, hiveextv1beta1.ReasonInstallationCompleted) {
		return ctrl.Result{Requeue: true}, s.updateClusterMetadata(ctx, in)
	}
	setState(in.aci, hiveextv1beta1.ClusterStateAddingHosts, "Cluster is installed; it accepts day-2 hosts")
	return ctrl.Result{}, nil
}

// startMachineAPI starts the workload cluster's machine API with the
// objects an installer on the BareMetal platform leaves for the ZTP hosts
// it installed, as the cluster's own machine-api-operator starts once the
// install is done.
//
// On platform None the installer writes no machine API objects and the
// cluster's machine API has no provider: nothing is started.
func (s *Service) startMachineAPI(ctx context.Context, in *install, spoke Spoke) error {
	if networkingOf(in.aci).platform != hiveextv1beta1.PlatformTypeBareMetal {
		return nil
	}
	hosts, err := s.day1Hosts(ctx, in)
	if err != nil {
		return err
	}
	if err := spoke.StartMachineAPI(ctx, hosts); err != nil {
		return fmt.Errorf("start the machine API of %s: %w", in.key(), err)
	}
	return nil
}

// addHosts installs day-2 hosts bound to an installed cluster.
//
// A host of a lab workload cluster joins with credentials the service
// issues from it; a host of a cluster with an ignition endpoint (an
// imported one, which has no lab workload cluster) with the pointer
// Ignition to the endpoint.
func (s *Service) addHosts(ctx context.Context, in *install) (ctrl.Result, error) {
	spoke := s.opts.Spokes.Get(in.key())
	if spoke == nil && in.aci.Spec.IgnitionEndpoint == nil {
		return ctrl.Result{}, nil
	}
	busy := false
	for i := range in.agents {
		a := &in.agents[i]
		if installStates[a.Status.DebugInfo.State] {
			busy = busy || a.Status.Progress.CurrentStage != agentv1beta1.HostStageDone
			continue
		}
		if conditionTrue(a, agentv1beta1.ConditionRequirementsMet) && a.Spec.Approved {
			if err := s.startInstall(ctx, in, a, spoke, false, true); err != nil {
				return ctrl.Result{}, err
			}
			busy = true
		}
	}
	if busy {
		return ctrl.Result{RequeueAfter: installRecheck}, nil
	}
	return ctrl.Result{}, nil
}
