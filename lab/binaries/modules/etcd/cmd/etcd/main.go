// Command etcd is the upstream etcd server, built from go.etcd.io modules
// (Debian's etcd 3.4 is too old for kube-apiserver 1.34).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
