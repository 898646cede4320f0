package scenarios

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A run that names its Nodes compares those alone; one that names none
// compares every Node.
func TestNamedNodes(t *testing.T) {
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "master-0"}}, {ObjectMeta: metav1.ObjectMeta{Name: "replace-0"}}}
	names := func(ns []corev1.Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	if got := names(namedNodes(nodes, []string{"replace-0"})); !slices.Equal(got, []string{"replace-0"}) {
		t.Errorf("named: %v", got)
	}
	if got := names(namedNodes(nodes, nil)); !slices.Equal(got, []string{"master-0", "replace-0"}) {
		t.Errorf("none named: %v", got)
	}
	if got := namedNodes(nodes, []string{"gone"}); len(got) != 0 {
		t.Errorf("a name no Node has: %v", got)
	}
}
