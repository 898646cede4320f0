package redfish

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// verifiedCacheSize bounds the cache of verified Basic credentials.
const verifiedCacheSize = 1024

// authenticator checks HTTP Basic credentials and session tokens.
//
// bcrypt is slow by design (tens of milliseconds at the default cost), and
// Basic auth sends the password with every request: checking each one would
// cap the emulator at a few dozen requests per second. So a pair that
// verified once is remembered, as an HMAC under a key that never leaves the
// process; wrong passwords are never cached and always pay the full cost.
type authenticator struct {
	creds    Credentials // nil: authentication is off
	sessions *sessionStore
	key      []byte
	dummy    []byte // compared for unknown users, so timing does not tell which users exist

	mu       sync.Mutex
	verified map[[sha256.Size]byte]struct{}
}

func newAuthenticator(creds Credentials, sessions *sessionStore) (*authenticator, error) {
	a := &authenticator{creds: creds, sessions: sessions, key: make([]byte, 32), verified: map[[sha256.Size]byte]struct{}{}}
	if _, err := rand.Read(a.key); err != nil {
		return nil, err
	}
	cost := bcrypt.MinCost
	for _, h := range creds {
		if c, err := bcrypt.Cost(h); err == nil && c > cost {
			cost = c
		}
	}
	dummy, err := bcrypt.GenerateFromPassword(a.key[:16], cost)
	if err != nil {
		return nil, err
	}
	a.dummy = dummy
	return a, nil
}

func (a *authenticator) enabled() bool { return a.creds != nil }

// check authenticates a request by its X-Auth-Token or, without one, its
// Basic credentials. A request with a token is judged by the token alone.
func (a *authenticator) check(r *http.Request) error {
	if !a.enabled() {
		return nil
	}
	if token := r.Header.Get("X-Auth-Token"); token != "" {
		if _, ok := a.sessions.lookup(token); !ok {
			return errUnauthorized("The X-Auth-Token is not a valid session (it expired, was deleted, or never existed); create a new session.")
		}
		return nil
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return errUnauthorized("This resource needs authentication: no credentials were sent.")
	}
	if !a.password(user, pass) {
		return errUnauthorized("The credentials were rejected: unknown user or wrong password.")
	}
	return nil
}

// password says whether user has password pass.
func (a *authenticator) password(user, pass string) bool {
	if !a.enabled() {
		return true
	}
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(pass))
	var sum [sha256.Size]byte
	copy(sum[:], mac.Sum(nil))
	a.mu.Lock()
	_, ok := a.verified[sum]
	a.mu.Unlock()
	if ok {
		return true
	}
	hash, known := a.creds[user]
	if !known {
		_ = bcrypt.CompareHashAndPassword(a.dummy, []byte(pass))
		return false
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil {
		return false
	}
	a.remember(sum)
	return true
}

func (a *authenticator) remember(sum [sha256.Size]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verified) >= verifiedCacheSize {
		clear(a.verified)
	}
	a.verified[sum] = struct{}{}
}
