package prow

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/GoogleCloudPlatform/testgrid/metadata/junit"
	"github.com/onsi/ginkgo/v2/types"
)

// paritySuite is what a dry run of `make e2e-parity` says about the suite:
// its specs, and the JUnit files it wrote with their testcase names.
type paritySuite struct {
	specs []types.SpecReport
	// junitFiles are the names of the *.xml files in its artifacts.
	junitFiles []string
	// testcases are the testcase names of its JUnit, in document order.
	testcases []string
}

var dryRuns sync.Map // seed -> paritySuite

// dryRunParitySuite runs `make e2e-parity-run` with ginkgo's --dry-run
// (the specs are listed and reported, none runs, no lab comes up) and the
// given seed for the order of the suite's top-level containers, once per
// seed and test binary.
func dryRunParitySuite(t *testing.T, seed int) paritySuite {
	t.Helper()
	if s, ok := dryRuns.Load(seed); ok {
		return s.(paritySuite)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	artifacts, err := os.MkdirTemp("", "paritylab-dry-run-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(artifacts)
	cmd := exec.Command("make", "--no-print-directory", "e2e-parity-run", "ARTIFACTS="+artifacts,
		fmt.Sprintf("E2E_GINKGO_FLAGS=--dry-run --seed=%d --randomize-all --json-report=dry-run.json", seed))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dry run of the parity suite: %v\n%s", err, out)
	}
	s := paritySuite{specs: readSpecReports(t, filepath.Join(artifacts, "dry-run.json"))}
	xmls, err := filepath.Glob(filepath.Join(artifacts, "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xmls {
		s.junitFiles = append(s.junitFiles, filepath.Base(x))
		s.testcases = append(s.testcases, testcaseNames(t, x)...)
	}
	dryRuns.Store(seed, s)
	return s
}

func readSpecReports(t *testing.T, path string) []types.SpecReport {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var specs []types.SpecReport
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType == types.NodeTypeIt {
				specs = append(specs, s)
			}
		}
	}
	if len(specs) == 0 {
		t.Fatalf("%s lists no spec", path)
	}
	return specs
}

// testcaseNames reads a JUnit file with TestGrid's parser, as the
// dashboards do.
func testcaseNames(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, s := range suites.Suites {
		for _, r := range s.Results {
			names = append(names, r.Name)
		}
	}
	return names
}

// labels are the labels the suite's specs carry, sorted.
func (s paritySuite) labels() []string {
	var out []string
	for _, spec := range s.specs {
		for _, l := range spec.Labels() {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// labelName is what a ginkgo label filter names a label with.
var labelName = regexp.MustCompile(`[^&|!,()/\s]+`)

// checkFilter: a label filter parses, names only labels the suite has and
// selects at least one spec; empty selects them all.
func (s paritySuite) checkFilter(filter string) error {
	if strings.TrimSpace(filter) == "" {
		return nil
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return err
	}
	for _, name := range labelName.FindAllString(filter, -1) {
		if !slices.Contains(s.labels(), name) {
			return fmt.Errorf("the parity suite has no label %q (it has %s)", name, strings.Join(s.labels(), ", "))
		}
	}
	for _, spec := range s.specs {
		if match(spec.Labels()) {
			return nil
		}
	}
	return errors.New("selects no spec of the parity suite")
}
