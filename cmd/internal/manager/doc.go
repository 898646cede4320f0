// Package manager is the common main of the provider manager binaries:
// flags as Cluster API providers have them (--namespace, --watch-filter,
// leader election, webhook serving, health probes), a controller-runtime
// manager, and the provider's setup function.
//
// It must not import anything of the lab.
package manager
