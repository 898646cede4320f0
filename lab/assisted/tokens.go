package assisted

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// tokens signs an InfraEnv's ID: the token agents of that InfraEnv present.
// Nothing is stored; a key per service run makes old tokens useless.
type tokens struct{ key []byte }

func newTokens() (*tokens, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate token key: %w", err)
	}
	return &tokens{key: key}, nil
}

func (t *tokens) forInfraEnv(id string) string {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte("infraenv/" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (t *tokens) valid(infraEnvID, token string) bool {
	return hmac.Equal([]byte(t.forInfraEnv(infraEnvID)), []byte(token))
}
