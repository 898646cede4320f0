package ginkgoprogress

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestGinkgoWriterStreams(t *testing.T) {
	cases := []struct {
		name     string
		parallel int
		reporter types.ReporterConfig
		want     bool
	}{
		{"default, in series", 1, types.ReporterConfig{}, false},
		{"-v, in series", 1, types.ReporterConfig{Verbose: true}, true},
		{"-vv, in series", 1, types.ReporterConfig{VeryVerbose: true}, true},
		{"-v, in parallel", 4, types.ReporterConfig{Verbose: true}, false},
		{"--succinct", 1, types.ReporterConfig{Succinct: true}, false},
	}
	for _, c := range cases {
		if got := ginkgoWriterStreams(types.SuiteConfig{ParallelTotal: c.parallel}, c.reporter); got != c.want {
			t.Errorf("%s: streams = %v, want %v", c.name, got, c.want)
		}
	}
}
