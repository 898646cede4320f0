// Package process starts, health-checks and stops the child processes the lab
// supervises (etcd, kube-apiserver, kube-controller-manager, libvirtd), and
// identifies them precisely enough that another process can end exactly
// those after a crash, never a process that merely reuses a PID.
//
// It imports nothing from the rest of the lab.
package process
