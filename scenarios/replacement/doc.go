// Package replacement is the machine replacement and remediation scenario,
// on the clusters the day1 scenario installed (or installs itself when run
// alone). Each sub-case is a scenario of its own in the results, so that
// the report shows each side by side:
//
//   - replacement-reboot: a worker's server hangs (its BMC still says On)
//     and comes back after a power cycle. MAPI: a MachineHealthCheck with
//     a Metal3RemediationTemplate, remediated by the port of
//     cluster-api-provider-baremetal's Metal3Remediation controller; CAPI:
//     a MachineHealthCheck with CAPM3's Metal3RemediationTemplate.
//   - replacement-reboot-annotation: the same failure under MAPI's older
//     path, the MachineHealthCheck's external-baremetal strategy
//     (annotation-driven power cycle by the bare-metal actuator), against
//     the same CAPI run.
//   - replacement-reboot-bmc-outage: replacement-reboot while the BMC
//     answers 503 from the moment the Node stops being Ready until the
//     bare-metal operator failed four times to reach it with the
//     remediation pending; both flows must converge with nothing left
//     half-done (host on and without error, request gone).
//   - replacement-stays-dead: the worker's server hangs on every
//     power-on; the remediation reboots it, retries once and gives up
//     (the host marked unhealthy); the run waits for the set's
//     replacement on the pool's spare host, deleting the dead Machine by
//     hand when none comes within a minute (CAPI: CAPM3 sets only the
//     deprecated v1beta1 OwnerRemediated condition, which CAPI's
//     MachineSet does not read), and records which way it came.
//   - replacement-short-circuit: two of a set's three workers hang at
//     once; a MachineHealthCheck made once both are unreachable, allowing
//     one unhealthy Machine (MAPI maxUnhealthy, CAPI
//     triggerIf.unhealthyLessThanOrEqualTo), counts 1 of 3 healthy and
//     remediates neither for 30 s. The run ends there: how the workers
//     come back depends on which returns first, so the run brings them
//     back after its observation is kept (health check deleted, a hard
//     reboot of each host), outside what is compared.
//   - replacement-owner-less: each flow's day-2 worker hangs under a
//     MachineHealthCheck with no remediation template and no strategy,
//     which leaves the Machine to its owner. MAPI: the worker ZTP adds on
//     day 2, whose Machine the BMAC writes without an owner (and whose
//     copy of the host in the spoke has no BMC; power lives on the hub's
//     host, which is detached): MAO's internal remediation records
//     SkippedNoController and does nothing. CAPI: a MachineDeployment's
//     worker, which its MachineSet deletes and replaces on the set's
//     spare host. The run waits for the Machine replaced, or 60 s with
//     nothing done to it, and records which; a worker left alone is
//     power-cycled at its BMC after the observation is kept.
//   - replacement-control-plane: a control-plane host's server hangs and
//     comes back after a power cycle. MAPI: a MachineHealthCheck over the
//     installer's master Machines with a Metal3RemediationTemplate (MAO's
//     template path has no owner check, so masters are eligible; the
//     run first gives the spoke's master hosts the BMC of their hub
//     hosts, as an admin must: the installer writes them without one);
//     CAPI: a MachineHealthCheck over the control plane's Machines with
//     CAPM3's template, so the control-plane provider is not asked to
//     remediate (OwnerRemediated is never set). The lab models no etcd
//     membership (the spoke's API server and etcd run outside the
//     hosts), and the report says so on the run's first milestone.
//   - replacement-control-plane-stays-dead: the control-plane host hangs
//     on every power-on; the remediation reboots it twice and gives up,
//     and the run watches for a minute that the control plane keeps the
//     same three Machines (OpenShift's Metal3Remediation never deletes a
//     master; CAPM3 asks the owner with the deprecated v1beta1
//     OwnerRemediated only, which the control-plane provider does not
//     read). The dead member's Node fate is a property of its Machine;
//     the Node aspects compare the two live members.
//
// In the runs of OpenShift's Metal3Remediation the lab's node fence
// (lab/workload/nodefence) holds every other write to the Node the
// remediation recreated until its restore of the labels and annotations
// has landed: that restore is one update from a cache, whose conflict
// upstream only logs, so a run whose young Node another writer touched
// in between would lose them now and then, and the verdict would flip.
// The workload cluster's audit log says which restoring writes the API
// server refused (none, so fenced).
//
// Each flow adds worker sets over pools of hosts of their own (a
// MachineSet in the spoke, a MachineDeployment on the hub, both selecting
// hosts by the pool's labels): one replica over two hosts, the second
// the spare a replacement takes; hosts the machine API manages with their
// BMC, as remediation needs; the short-circuit's set has three replicas
// over three hosts of its own; the owner-less sub-case's CAPI set has
// one replica and a spare, its MAPI set is the one ZTP day-2 host. A
// run compares the set's Machines, the pool's hosts, the workers' Nodes
// and the events from its start only; the day-1 cluster it starts from
// is day1's to compare.
package replacement
