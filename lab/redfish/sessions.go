package redfish

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

// Session limits. Ironic keeps one client, hence one session, per node and
// credentials, so a lab needs few; the cap only keeps a misbehaving client
// from growing the table without bound.
const (
	sessionTimeout = 30 * time.Minute
	maxSessions    = 256
)

// session is a Redfish login. The token is kept only as a hash.
type session struct {
	id       string
	user     string
	token    [sha256.Size]byte
	lastUsed time.Time
}

// sessionStore holds the sessions of SessionService. Sessions idle longer
// than the timeout expire; when the table is full the least recently used
// one goes, and its client, answered 401, logs in again (sushy does so by
// itself).
type sessionStore struct {
	timeout time.Duration
	max     int
	now     func() time.Time

	mu      sync.Mutex
	byID    map[string]*session
	byToken map[[sha256.Size]byte]*session
}

func newSessionStore() *sessionStore {
	return &sessionStore{
		timeout: sessionTimeout, max: maxSessions, now: time.Now,
		byID: map[string]*session{}, byToken: map[[sha256.Size]byte]*session{},
	}
}

// create starts a session for user and returns its ID and token.
func (st *sessionStore) create(user string) (id, token string, err error) {
	id, err = randomHex(8)
	if err != nil {
		return "", "", err
	}
	token, err = randomHex(32)
	if err != nil {
		return "", "", err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	if len(st.byID) >= st.max {
		st.evictLocked()
	}
	s := &session{id: id, user: user, token: sha256.Sum256([]byte(token)), lastUsed: st.now()}
	st.byID[id], st.byToken[s.token] = s, s
	return id, token, nil
}

// lookup returns the session of a token and marks it used.
func (st *sessionStore) lookup(token string) (session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.byToken[sha256.Sum256([]byte(token))]
	if !ok {
		return session{}, false
	}
	if st.now().Sub(s.lastUsed) > st.timeout {
		st.removeLocked(s)
		return session{}, false
	}
	s.lastUsed = st.now()
	return *s, true
}

func (st *sessionStore) get(id string) (session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.byID[id]
	if !ok || st.now().Sub(s.lastUsed) > st.timeout {
		return session{}, false
	}
	return *s, true
}

func (st *sessionStore) delete(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.byID[id]
	if ok {
		st.removeLocked(s)
	}
	return ok
}

// ids lists the live sessions.
func (st *sessionStore) ids() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	out := make([]string, 0, len(st.byID))
	for id := range st.byID {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (st *sessionStore) expireLocked() {
	now := st.now()
	for _, s := range st.byID {
		if now.Sub(s.lastUsed) > st.timeout {
			st.removeLocked(s)
		}
	}
}

func (st *sessionStore) evictLocked() {
	var oldest *session
	for _, s := range st.byID {
		if oldest == nil || s.lastUsed.Before(oldest.lastUsed) {
			oldest = s
		}
	}
	if oldest != nil {
		st.removeLocked(oldest)
	}
}

func (st *sessionStore) removeLocked(s *session) {
	delete(st.byID, s.id)
	delete(st.byToken, s.token)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
