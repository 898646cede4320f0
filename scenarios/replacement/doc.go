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
//
// Each flow adds a worker set of one replica over a pool of hosts of its
// own (a MachineSet in the spoke, a MachineDeployment on the hub, both
// selecting hosts by the pool's labels): hosts the machine API manages
// with their BMC, as remediation needs. A run compares the set's
// Machines, the pool's hosts, the worker's Node and the events from its
// start only; the day-1 cluster it starts from is day1's to compare.
package replacement
