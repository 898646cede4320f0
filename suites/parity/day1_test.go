package parity

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/paritylab/paritylab/scenarios/day1"
)

var _ = Describe("Day-1 install", Label("day1"), Ordered, ContinueOnFailure, func() {
	AfterEach(dumpOnFailure)
	day1.Spec(getInput)
})
