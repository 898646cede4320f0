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
	// hosts is how many hosts each flow's pool has.
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
)

// HostsNeeded is how many lab hosts the scenario claims, both flows.
const HostsNeeded = 2 * (2 + 3)

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

func (p pool) hostNames() []string {
	var out []string
	for i := range p.hosts {
		out = append(out, fmt.Sprintf("%s-%d", p.name, i))
	}
	return out
}
