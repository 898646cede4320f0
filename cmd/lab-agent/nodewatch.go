package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// watchTimeout is how long one watch of the node's own Node runs before
// it is opened again, as a kubelet's informer renews its watch.
const watchTimeout = 300

// followDesiredKubelet watches the node's own Node, as a kubelet does, and
// reports the kubelet version its DesiredKubeletAnnotation asks for as soon
// as it changes: a node moved to another release in place comes back with
// its kubelet well before the next heartbeat. It runs until ctx ends.
func (n *node) followDesiredKubelet(ctx context.Context) {
	for {
		if err := n.watchNode(ctx); err != nil && ctx.Err() == nil {
			log.Printf("node %s: watch: %v", n.cfg.Name, err)
		}
		if !sleep(ctx, 2*time.Second) {
			return
		}
	}
}

// watchNode runs one watch of the Node and acts on each event.
func (n *node) watchNode(ctx context.Context) error {
	q := url.Values{
		"watch":          {"true"},
		"fieldSelector":  {"metadata.name=" + n.cfg.Name},
		"timeoutSeconds": {fmt.Sprint(watchTimeout)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.base+"/api/v1/nodes?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	// The heartbeat client's timeout would cut the watch short.
	resp, err := (&http.Client{Transport: n.http.Transport}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch Node %s: %s", n.cfg.Name, resp.Status)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string      `json:"type"`
			Object corev1.Node `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return nil // the watch ended (timeout, server restart)
		}
		if ev.Type != "ADDED" && ev.Type != "MODIFIED" {
			continue
		}
		if n.takeDesiredKubelet(&ev.Object) {
			if _, err := n.patchStatus(ctx); err != nil {
				log.Printf("node status: %v", err)
			}
		}
	}
}

// takeDesiredKubelet switches to the kubelet version the Node asks for, and
// says whether that is a change.
func (n *node) takeDesiredKubelet(nd *corev1.Node) bool {
	want := nd.Annotations[agentapi.DesiredKubeletAnnotation]
	n.mu.Lock()
	defer n.mu.Unlock()
	if want == "" || want == n.kubelet {
		return false
	}
	log.Printf("node %s: kubelet %s -> %s (machine config)", n.cfg.Name, n.kubelet, want)
	n.kubelet = want
	return true
}

func (n *node) kubeletVersion() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.kubelet
}
