package parity

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/paritylab/paritylab/scenarios/day2scale"
)

var _ = Describe("Day-2 scale", Label("day2-scale"), Ordered, ContinueOnFailure, func() {
	AfterEach(dumpOnFailure)
	day2scale.Spec(getInput)
})
