// Package hub defines the management cluster ("hub") every lab run works on,
// behind one small interface with two backends:
//
//   - local (lab/hub/local): real kube-apiserver and etcd processes on this
//     machine; the default, and what CI runs.
//   - kind (lab/hub/kind): a kind cluster, for lab hosts with a container
//     engine.
//
// It must not import anything above lab (framework, scenarios, suites).
package hub
