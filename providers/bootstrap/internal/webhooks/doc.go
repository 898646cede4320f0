// Package webhooks holds the bootstrap provider's validating admission
// webhooks: an OpenshiftAssistedConfig's spec is immutable (it was rendered
// into the Machine's InfraEnv and bootstrap data) and every value is
// checked with a message that says how to fix it; templates are checked
// the same way but may change.
//
// It must not import controller code or anything of the lab.
package webhooks
