// Package capoa registers where paritylab's CAPI agent providers behave
// differently from CAPOA (openshift-assisted/cluster-api-provider-
// openshift-assisted), the upstream providers of the same API.
//
// The parity registry (results/known-divergences.yaml) may only explain
// upstream behaviour. A difference that comes from one of our departures
// is not upstream's, so no entry may explain it: the report names these
// departures next to the providers in its backends line instead, so that a
// reader of a CAPI-flow line knows when our providers, not CAPOA, wrote
// it. Where our providers write what CAPOA writes (labels, annotations,
// install objects, the Agent's installer args) there is no departure to
// register.
//
// It must not import anything of paritylab: the lab and the results read
// it.
package capoa

// Repository is CAPOA's repository, which CAPOARef paths are in.
const Repository = "openshift-assisted/cluster-api-provider-openshift-assisted"

// Provider names which of our providers departs.
type Provider string

// Our providers.
const (
	ControlPlane Provider = "control-plane"
	Bootstrap    Provider = "bootstrap"
)

// Departure is one behaviour where our provider and CAPOA differ.
type Departure struct {
	// ID is a short stable name, shown in reports.
	ID string
	// Provider is the one of ours that departs.
	Provider Provider
	// CAPOA says what CAPOA does; CAPOARef where (path in Repository,
	// then the function).
	CAPOA, CAPOARef string
	// Ours says what ours does; OursRef where (path in this repository,
	// then the function or method, Type.Method).
	Ours, OursRef string
	// ShowsIn says where a parity run sees it.
	ShowsIn string
}

// Departures are all the registered departures, in report order.
var Departures = []Departure{
	{
		ID: "cp-remediation", Provider: ControlPlane,
		CAPOA:    "never acts on OwnerRemediated: a MachineHealthCheck's unhealthy control-plane Machine stays as it is",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go OpenshiftAssistedControlPlaneReconciler.Reconcile",
		Ours:     "deletes one OwnerRemediated=False control-plane Machine if the others keep etcd quorum; the scale-up that follows replaces it",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_scale.go Reconciler.remediate",
		ShowsIn:  "a control-plane MachineHealthCheck (replacement scenario)",
	},
	{
		ID: "cp-scale-down-choice", Provider: ControlPlane,
		CAPOA:    "deletes the oldest Machine of the failure domain, whatever cluster.x-k8s.io/delete-machine says",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go selectMachineForScaleDown",
		Ours:     "deletes a delete-machine annotated Machine first, then one without a Node, then the oldest",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_scale.go machineToDelete",
		ShowsIn:  "control-plane scale-down",
	},
	{
		ID: "cp-quorum-guard", Provider: ControlPlane,
		CAPOA:    "scales a highly available control plane below three Machines when asked",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go OpenshiftAssistedControlPlaneReconciler.reconcileReplicas",
		Ours:     "refuses to go below three Machines from three or more (ScaleDownBlocked) and deletes one Machine at a time, waiting while one is being deleted",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_scale.go Reconciler.scaleDown",
		ShowsIn:  "control-plane scale-down",
	},
	{
		ID: "kubeconfig-refresh", Provider: ControlPlane,
		CAPOA:    "creates <cluster>-kubeconfig once, from the no-ingress admin kubeconfig assisted-service publishes while installing, and never updates it",
		CAPOARef: "controlplane/internal/controller/agentclusterinstall_controller.go AgentClusterInstallReconciler.reconcile",
		Ours:     "keeps <cluster>-kubeconfig equal to the admin kubeconfig the AgentClusterInstall names, so it becomes the full one once the cluster is installed",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_phases.go Reconciler.writeKubeconfig",
		ShowsIn:  "nothing in the lab: its workload clusters have no ingress, so both kubeconfigs are the same",
	},
	{
		ID: "cp-upgrade-available", Provider: ControlPlane,
		CAPOA:    "sets UpgradeAvailable=False (UpgradeImageUnavailable) when the release image of spec.distributionVersion is not found, never sets it True again, and stops the reconcile before the replicas",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go OpenshiftAssistedControlPlaneReconciler.Reconcile",
		Ours:     "sets UpgradeAvailable True or False on every reconcile of an installed cluster, never writes a desiredUpdate for a release it cannot read, and keeps reconciling Machines",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_status.go setUpgradeAvailable",
		ShowsIn:  "the upgrade scenario's missing release (c), when it is withdrawn: upstream's condition would stay False",
	},
	{
		ID: "cp-upgrade-transient-failure", Provider: ControlPlane,
		CAPOA:    "reports UpgradeCompleted=False (UpgradeFailed) from the moment it writes desiredUpdate until the version operator reports Progressing",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go OpenshiftAssistedControlPlaneReconciler.setUpgradeStatus",
		Ours:     "reports UpgradeInProgress until the version operator has observed the request (observedGeneration), and UpgradeFailed only for a refusal or failure of this request",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_upgrade.go followUpgrade",
		ShowsIn:  "the control plane's condition timeline in the upgrade scenario (not compared: the MAPI flow has no control plane object)",
	},
	{
		ID: "cp-release-lookup-panic", Provider: ControlPlane,
		CAPOA:    "panics on a nil Kubernetes version when reading the release image fails: its not-found check never matches, as the error is wrapped with %v",
		CAPOARef: "controlplane/internal/controller/openshiftassistedcontrolplane_controller.go OpenshiftAssistedControlPlaneReconciler.Reconcile",
		Ours:     "sets KubernetesVersionAvailable=False and, once installed, UpgradeAvailable=False with the registry's error, and asks again later",
		OursRef:  "providers/controlplane/internal/controllers/openshiftassistedcontrolplane/openshiftassistedcontrolplane_controller_phases.go Reconciler.reconcileRelease",
		ShowsIn:  "the upgrade scenario's missing release (c)",
	},
	{
		ID: "worker-gate", Provider: Bootstrap,
		CAPOA:    "holds a worker that comes after the install started until the install is adding-hosts (or \"\", insufficient, pending-for-input), looking again every 60 s: it watches no AgentClusterInstall",
		CAPOARef: "bootstrap/internal/controller/openshiftassistedconfig_controller.go OpenshiftAssistedConfigReconciler.reconcileAssistedResources",
		Ours:     "also accepts ready, and looks again as soon as the AgentClusterInstall changes",
		OursRef:  "providers/bootstrap/internal/controllers/openshiftassistedconfig/openshiftassistedconfig_controller_phases.go acceptsWorkers",
		ShowsIn:  "durations of a CAPI worker added while the control plane installs (day1 nodes-ready): upstream's can start up to 60 s later",
	},
}

// IDs are the IDs of a provider's departures, in report order.
func IDs(p Provider) []string {
	var out []string
	for _, d := range Departures {
		if d.Provider == p {
			out = append(out, d.ID)
		}
	}
	return out
}
