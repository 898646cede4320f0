package parity

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
	"github.com/paritylab/paritylab/scenarios/day2scale"
	"github.com/paritylab/paritylab/scenarios/disconnected"
	"github.com/paritylab/paritylab/scenarios/hypershift"
	"github.com/paritylab/paritylab/scenarios/replacement"
	"github.com/paritylab/paritylab/scenarios/upgrade"
)

// suiteScenarios are the scenarios this suite runs; the known-divergence
// registry must declare exactly these (an entry for a scenario that does
// not exist explains nothing and would never go stale).
var suiteScenarios = append(append(append([]string{day1.Name, day2scale.Name}, replacement.Names()...), upgrade.Name, disconnected.Name),
	hypershift.Names()...)

// One Ordered container keeps the scenarios in the order they build on
// each other (ginkgo shuffles top-level containers otherwise): day-2
// scale, replacement and upgrade start from the clusters day-1 installed
// (upgrade after them: it moves them to other releases). Disconnected
// installs clusters of its own; it runs last because it configures the
// hub's mirrors while it runs, and it powers the earlier scenarios' hosts
// off before it starts. ContinueOnFailure runs
// every flow and diff even after one failed, so that the report shows
// everything. Each scenario has its label for --label-filter.
var _ = Describe("Parity", Ordered, ContinueOnFailure, func() {
	AfterEach(dumpOnFailure)

	Describe("Day-1 install", Label("day1"), func() {
		day1.Spec(getInput)
	})

	Describe("Day-2 scale", Label("day2-scale"), func() {
		day2scale.Spec(getInput)
	})

	Describe("Replacement", Label("replacement"), func() {
		replacement.Spec(getInput)
	})

	Describe("Upgrade", Label("upgrade"), func() {
		upgrade.Spec(getInput)
	})

	Describe("Disconnected", Ordered, Label("disconnected"), func() {
		// Nothing from here on starts from the earlier scenarios'
		// clusters, so their hosts are powered off first: with them
		// running too, the lab would need about 32 GiB (41 TCG guests at
		// about 0.8 GiB each), more than the 24 GiB lab machine has.
		var retired []framework.ClaimedHostRecord
		BeforeAll(func(ctx SpecContext) {
			var err error
			var paused int
			retired, paused, err = scenarios.RetireClaimedHosts(ctx, input)
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("hosts of earlier scenarios powered off", fmt.Sprintf("%d (%d BareMetalHosts paused)", len(retired), paused))
		}, NodeTimeout(5*time.Minute))
		// Paused, they stay off: a host powered on again means an
		// operator ignored the pause, and the memory is gone again.
		AfterAll(func(ctx SpecContext) {
			on, err := scenarios.PoweredOnAgain(ctx, input.Lab, retired)
			Expect(err).NotTo(HaveOccurred())
			Expect(on).To(BeEmpty(), "retired hosts powered on again")
		}, NodeTimeout(5*time.Minute))
		disconnected.Spec(getInput)
	})

	Describe("HyperShift", Label("hypershift"), func() {
		hypershift.Spec(getInput)
	})
})
