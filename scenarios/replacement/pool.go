package replacement

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/paritylab/paritylab/scenarios"
)

// pool is a worker set of each flow and the hosts it takes its Machines
// from: hosts of its own (labelled with its name), so that another
// scenario's free worker hosts never end up in it, and sets of other
// sub-cases never share its hosts.
type pool struct {
	// name is the set's suffix and the hosts' pool label.
	name string
	// controlPlane: the pool is the day-1 cluster's control plane, its
	// hosts and Machines the installer's (NameControlPlane); no set is
	// made and no host claimed.
	controlPlane bool
	// ztpDay2: the MAPI flow's set is the one worker ZTP adds on day 2
	// (NameOwnerless): its Machine has no owner and the run labels it for
	// the health check; the CAPI flow's is a MachineDeployment as usual.
	ztpDay2 bool
	// hosts is how many hosts each flow's pool has (the MAPI flow's
	// ztpDay2 set has one).
	hosts int
	// replicas is the set's size.
	replicas int
}

var (
	// rebootPool: one worker and a spare, for the reboot sub-cases.
	rebootPool = pool{name: "replace", hosts: 2, replicas: 1}
	// controlPlanePool: the day-1 cluster's three control-plane hosts.
	controlPlanePool = pool{name: "control-plane", replicas: 3, controlPlane: true}
	// shortCircuitPool: three workers, two of which fail.
	shortCircuitPool = pool{name: "shortc", hosts: 3, replicas: 3}
	// day2Pool: each flow's day-2 worker (NameOwnerless); the CAPI
	// flow's set has a spare its owner replaces the worker on.
	day2Pool = pool{name: "day2", hosts: 2, replicas: 1, ztpDay2: true}
)

// HostsNeeded is how many lab hosts the scenario claims, both flows: the
// reboot and short-circuit pools of each, the CAPI flow's day-2 pool and
// the MAPI flow's ZTP day-2 host.
const HostsNeeded = 2*(2+3) + 2 + 1

// labels are the labels of the pool's hosts, which the set selects its
// hosts by (the control plane's: the role label both flows' hosts carry,
// the MAPI flow's once the run's set-up put it on them).
func (p pool) labels() map[string]string {
	if p.controlPlane {
		return map[string]string{scenarios.HostRoleLabel: scenarios.RoleControlPlane}
	}
	return map[string]string{scenarios.HostRoleLabel: scenarios.RoleWorker, scenarios.HostPoolLabel: p.name}
}

// selector selects the pool's hosts.
func (p pool) selector() string { return labels.SelectorFromSet(p.labels()).String() }

// ztpHost is the name of the host ZTP adds on day 2 to the MAPI flow's
// ztpDay2 set; its Node and its copy in the spoke take the name.
func (p pool) ztpHost() string { return "ztp-" + p.name + "-0" }

func (p pool) hostNames() []string {
	var out []string
	for i := range p.hosts {
		out = append(out, fmt.Sprintf("%s-%d", p.name, i))
	}
	return out
}
