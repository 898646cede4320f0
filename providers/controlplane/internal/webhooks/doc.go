// Package webhooks holds the control-plane provider's validating admission
// webhook: values are checked on create with messages that say how to fix
// them, and on update the fields the installed cluster was made from stay
// fixed, a single-node cluster keeps one replica and the OpenShift version
// never goes back.
//
// It must not import controller code or anything of the lab.
package webhooks
