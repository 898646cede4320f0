// Package validation checks provider specs field by field, for the
// validating webhooks of both providers. Every error names the field and
// says what a valid value looks like, so a user can fix it from the message
// alone.
//
// It must not import controller code.
package validation
