package agentbin

import (
	"context"
	"debug/elf"
	"testing"
)

func TestBuildsAStaticAgent(t *testing.T) {
	path, err := Path(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("lab-agent must be static: guests have no dynamic loader")
		}
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv(Env, "/opt/agent")
	if p, err := Path(context.Background(), t.TempDir()); err != nil || p != "/opt/agent" {
		t.Fatalf("%s %v", p, err)
	}
}
