package metal3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// credentials log in to a BMC.
type credentials struct{ username, password string }

// specError is a problem with what the user wrote (spec.bmc or its
// Secret): only they can fix it. Its texts are BMO's status messages, word
// for word where BMO has one, so that the two flows compare.
type specError struct{ msg string }

func (e *specError) Error() string { return e.msg }

func specErrorf(format string, args ...any) error {
	return &specError{msg: fmt.Sprintf(format, args...)}
}

// bmcAccess reads spec.bmc and its Secret, as BMO's
// buildAndValidateBMCCredentials: nothing is sent to the BMC yet.
func (r *hostReconciler) bmcAccess(ctx context.Context, h *bmov1alpha1.BareMetalHost) (*corev1.Secret, credentials, bmcAddress, error) {
	if h.Spec.BMC.CredentialsName == "" {
		return nil, credentials{}, bmcAddress{}, specErrorf("The BMC secret reference is empty: set spec.bmc.credentialsName")
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: h.Namespace, Name: h.Spec.BMC.CredentialsName}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, credentials{}, bmcAddress{}, specErrorf("The BMC secret %s does not exist", key)
		}
		return nil, credentials{}, bmcAddress{}, fmt.Errorf("read BMC secret %s: %w", key, err)
	}
	if h.Spec.BMC.Address == "" {
		return secret, credentials{}, bmcAddress{}, specErrorf("Missing BMC connection detail 'Address'")
	}
	addr, err := parseBMCAddress(h.Spec.BMC.Address)
	if err != nil {
		return secret, credentials{}, bmcAddress{}, &specError{msg: err.Error()}
	}
	// Trimmed, as BMO does: `echo password | base64` adds a newline.
	creds := credentials{
		username: strings.TrimSpace(string(secret.Data["username"])),
		password: strings.TrimSpace(string(secret.Data["password"])),
	}
	switch {
	case creds.username == "":
		return secret, creds, addr, specErrorf("Missing BMC connection detail 'username' in secret %s", key)
	case creds.password == "":
		return secret, creds, addr, specErrorf("Missing BMC connection detail 'password' in secret %s", key)
	}
	return secret, creds, addr, nil
}

// loadCredentials reads the host's BMC access for every state but the
// first two. A problem with it is a registration error; a host being
// deleted goes on without (and is then not powered off).
func (r *hostReconciler) loadCredentials(ctx context.Context, s *scope) (result, bool, error) {
	switch s.next {
	case bmov1alpha1.StateNone, bmov1alpha1.StateUnmanaged:
		return idle, true, nil
	}
	secret, creds, addr, err := r.bmcAccess(ctx, s.host)
	var se *specError
	switch {
	case err == nil:
		s.secret, s.creds, s.address = secret, creds, addr
		return idle, true, nil
	case s.deleting():
		s.log.Info("Deleting without BMC access", "reason", err.Error())
		return idle, true, nil
	case errors.As(err, &se):
		return r.fail(s, bmov1alpha1.RegistrationError, err.Error()), false, nil
	default:
		return idle, false, err
	}
}

// ensureRegistered checks BMC access (BMO's registerHost): it connects and
// reads the system, and records tried and good credentials. Failing that is
// a registration error, and the state machine waits. On success s.bmc is
// connected.
func (r *hostReconciler) ensureRegistered(ctx context.Context, s *scope) (result, bool) {
	switch s.next {
	case bmov1alpha1.StateNone, bmov1alpha1.StateUnmanaged, bmov1alpha1.StateDeleting:
		return idle, true
	}
	h := s.host
	if s.secret == nil {
		return idle, true // being deleted without credentials
	}
	if !h.Status.TriedCredentials.Match(*s.secret) {
		h.UpdateTriedCredentials(*s.secret)
	}
	conn, err := dialBMC(ctx, dialInput{address: s.address, username: s.creds.username, password: s.creds.password,
		client: r.transports.client(h.Spec.BMC.DisableCertificateVerification)})
	if err != nil {
		return r.fail(s, registrationErrorType(s), err.Error()), false
	}
	s.bmc = conn
	if id := systemUUID(conn); h.Status.Provisioning.ID != id {
		h.Status.Provisioning.ID = id
	}
	newCreds := !h.Status.GoodCredentials.Match(*s.secret)
	if newCreds {
		h.UpdateGoodCredentials(*s.secret)
		r.event(h, corev1.EventTypeNormal, "BMCAccessValidated", "Verified access to BMC")
	}
	if newCreds || h.Status.ErrorType == bmov1alpha1.RegistrationError || h.Status.ErrorType == bmov1alpha1.ProvisionedRegistrationError {
		clearError(h)
	}
	return idle, true
}

// registrationErrorType is what losing the BMC means in the host's state.
func registrationErrorType(s *scope) bmov1alpha1.ErrorType {
	if s.provisioned() {
		return bmov1alpha1.ProvisionedRegistrationError
	}
	return bmov1alpha1.RegistrationError
}

// systemUUID is the host's ID in status.provisioning: the system's UUID
// (its Id when it has none).
func systemUUID(c *bmcConn) string {
	if c.system.UUID != "" {
		return strings.ToLower(c.system.UUID)
	}
	return c.system.ID
}
