// Command kube-apiserver is the upstream Kubernetes API server, built from
// the k8s.io/kubernetes module so the local hub needs no downloaded binary.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
