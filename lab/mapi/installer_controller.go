package mapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// installerController gives the installed worker hosts to the worker
// Machines the MachineSet creates, as assisted-installer's controller does
// in a cluster it installed on the BareMetal platform (UpdateBMHs): it
// repeatedly lists the hosts and the worker Machines no host consumes yet
// ("unallocated"), sets each unconsumed host's consumerRef to the next
// unallocated Machine in list order, and stops once every host it looks
// after has a consumer. Until then the actuator finds no host for those
// Machines (an externally provisioned host is never available) and waits.
// It looks after the installed worker hosts only: hosts added to the
// cluster later are the MachineSet's to choose.
type installerController struct {
	reader    client.Reader
	writer    client.Client
	namespace string
	// hosts are the installed worker hosts' BareMetalHost names.
	hosts []string
	// interval is how often it looks again. Upstream polls every 30s
	// while the install finishes, long before the cluster is reported
	// installed; the lab starts the machine API only at that report, so
	// it looks often to link the hosts as early as upstream has them.
	interval time.Duration
	log      logr.Logger
}

func newInstallerController(reader client.Reader, writer client.Client, opts Options) *installerController {
	c := &installerController{reader: reader, writer: writer, namespace: opts.Namespace, interval: time.Second,
		log: opts.Logger.WithName("installer-controller")}
	for _, h := range opts.Installed {
		if h.Role != agentv1beta1.HostRoleMaster {
			c.hosts = append(c.hosts, h.BareMetalHost)
		}
	}
	sort.Strings(c.hosts)
	return c
}

// Start runs until every installed worker host has a consumer.
func (c *installerController) Start(ctx context.Context) error {
	if len(c.hosts) == 0 {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, c.interval, true, func(ctx context.Context) (bool, error) {
		done, err := c.link(ctx)
		if err != nil {
			c.log.Info("Linking installed hosts to Machines; will retry", "error", err.Error())
			return false, nil
		}
		return done, nil
	})
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("installer controller: %w", err)
	}
	if err == nil {
		c.log.Info("Every installed worker host has its Machine", "hosts", len(c.hosts))
	}
	return nil
}

// link gives unconsumed installed hosts to unallocated worker Machines and
// tells whether every installed host has a consumer.
func (c *installerController) link(ctx context.Context) (bool, error) {
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := c.reader.List(ctx, hosts, client.InNamespace(c.namespace)); err != nil {
		return false, fmt.Errorf("list BareMetalHosts: %w", err)
	}
	machines := &machinev1beta1.MachineList{}
	if err := c.reader.List(ctx, machines, client.InNamespace(c.namespace), client.MatchingLabels{RoleLabel: "worker"}); err != nil {
		return false, fmt.Errorf("list worker Machines: %w", err)
	}
	free := unallocated(machines.Items, hosts.Items)
	done := true
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if !c.looksAfter(h.Name) || h.Spec.ConsumerRef != nil {
			continue
		}
		if len(free) == 0 {
			// The MachineSet has not created its Machine yet.
			done = false
			continue
		}
		m := free[0]
		free = free[1:]
		h.Spec.ConsumerRef = machineRef(m.Name, m.Namespace)
		if err := c.writer.Update(ctx, h); err != nil {
			return false, fmt.Errorf("set consumer of BareMetalHost %s to Machine %s: %w", h.Name, m.Name, err)
		}
		c.log.Info("Installed host linked to its Machine", "host", h.Name, "machine", m.Name)
	}
	return done, nil
}

func (c *installerController) looksAfter(host string) bool {
	i := sort.SearchStrings(c.hosts, host)
	return i < len(c.hosts) && c.hosts[i] == host
}

// unallocated are the Machines (in list order, i.e. by name) that no
// host names as consumer and that are not being deleted.
func unallocated(machines []machinev1beta1.Machine, hosts []bmov1alpha1.BareMetalHost) []*machinev1beta1.Machine {
	consumed := map[string]bool{}
	for _, h := range hosts {
		if ref := h.Spec.ConsumerRef; ref != nil && ref.Kind == machineKind {
			consumed[ref.Name] = true
		}
	}
	var out []*machinev1beta1.Machine
	for i := range machines {
		if m := &machines[i]; !consumed[m.Name] && m.DeletionTimestamp.IsZero() {
			out = append(out, m)
		}
	}
	return out
}

// installedWorkers counts the installed hosts that are not control-plane
// hosts: the installer's worker MachineSet replicas.
func installedWorkers(hosts []assisted.InstalledHost) int32 {
	n := int32(0)
	for _, h := range hosts {
		if h.Role != agentv1beta1.HostRoleMaster {
			n++
		}
	}
	return n
}
