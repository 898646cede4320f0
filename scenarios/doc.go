// Package scenarios holds what the paired scenarios share: the Input a
// suite hands them, the ZTP manifests of the classic flow, the
// observation collector and how observations land in the artifacts.
//
// Each scenario lives in its own package (day1, day2scale) and exports a
// Spec function in the Cluster API test framework's style: called inside
// a suite's Describe, it declares the specs that run the MAPI flow, the
// CAPI flow and the diff of the two.
package scenarios
