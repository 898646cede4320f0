// Package day1 is the Day-1 install scenario: the same cluster, three
// control-plane nodes and two workers, installed once from ZTP manifests
// (the MAPI flow: the spoke's machine API takes over after install) and
// once through the CAPI agent providers (Cluster,
// OpenshiftAssistedControlPlane, MachineDeployment, Metal3 templates), on
// hosts of identical virtual hardware.
package day1
