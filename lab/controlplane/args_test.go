package controlplane

import (
	"slices"
	"strings"
	"testing"
)

func TestAPIServerArgs(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want []string
		not  []string
	}{
		{
			name: "hub defaults",
			opts: Options{Dir: t.TempDir()},
			want: []string{"--authorization-mode=RBAC"},
			not:  []string{"--enable-admission-plugins="},
		},
		{
			name: "workload cluster",
			opts: Options{Dir: t.TempDir(), AuthorizationModes: []string{"Node", "RBAC"}, AdmissionPlugins: []string{"NodeRestriction"}},
			want: []string{"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.opts.defaults(); err != nil {
				t.Fatal(err)
			}
			cp := &ControlPlane{opts: c.opts, files: files{dir: c.opts.Dir}}
			args := cp.apiServerArgs(6443, "http://127.0.0.1:2379")
			for _, w := range c.want {
				if !slices.Contains(args, w) {
					t.Errorf("args lack %s: %v", w, args)
				}
			}
			for _, n := range c.not {
				if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, n) }) {
					t.Errorf("args carry %s...: %v", n, args)
				}
			}
		})
	}
}
