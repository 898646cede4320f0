// Package specdiff finds which fields of a spec changed, so that
// immutability errors can name them.
//
// It imports nothing of paritylab.
package specdiff
