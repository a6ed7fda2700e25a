// Package secretbox seals secrets kept at rest (the payment providers'
// webhook signing secrets) with AES-256-GCM under a key from the
// environment, and opens them with that key or an earlier one, so keys can
// be rotated: add the new key, keep the old ones for reading, reseal, then
// drop the old ones.
//
// A sealed value is "v1:" + the key's id (8 hex digits of its SHA-256) + ":"
// + base64 of nonce and ciphertext. The row it belongs to is bound in as
// additional data, so a sealed value copied to another row does not open.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a key in bytes.
const KeySize = 32

const prefix = "v1:"

// ErrUnknownKey: the value was sealed with a key the box does not hold.
var ErrUnknownKey = errors.New("secretbox: sealed with a key that is not configured")

// Box seals with its current key and opens with any of its keys.
type Box struct {
	current string // id of the current key
	aeads   map[string]cipher.AEAD
}

// New makes a box sealing with current and opening with current and old.
func New(current []byte, old ...[]byte) (*Box, error) {
	b := &Box{aeads: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{current}, old...) {
		if len(k) != KeySize {
			return nil, fmt.Errorf("secretbox: a key is %d bytes, want %d", len(k), KeySize)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("secretbox: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secretbox: %w", err)
		}
		id := KeyID(k)
		if i == 0 {
			b.current = id
		}
		b.aeads[id] = aead
	}
	return b, nil
}

// KeyID names a key without revealing it.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// ParseKey reads a key written as base64 (standard or URL alphabet, padded
// or not) of KeySize bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("secretbox: a key is %d bytes in base64 (e.g. head -c %d /dev/urandom | base64)", KeySize, KeySize)
}

// Seal encrypts plain for the row named by aad.
func (b *Box) Seal(plain, aad string) (string, error) {
	aead := b.aeads[b.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secretbox: %w", err)
	}
	sealed := aead.Seal(nonce, nonce, []byte(plain), []byte(aad))
	return prefix + b.current + ":" + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// Open decrypts a value Seal wrote for the row named by aad. current is false
// when it was sealed with an old key, or is a value stored before secrets
// were sealed (returned as it is): either should be sealed again.
func (b *Box) Open(sealed, aad string) (plain string, current bool, err error) {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return sealed, false, nil
	}
	id, data, ok := strings.Cut(rest, ":")
	if !ok {
		return "", false, errors.New("secretbox: malformed value")
	}
	aead, ok := b.aeads[id]
	if !ok {
		return "", false, ErrUnknownKey
	}
	raw, err := base64.RawStdEncoding.DecodeString(data)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", false, errors.New("secretbox: malformed value")
	}
	out, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(aad))
	if err != nil {
		return "", false, errors.New("secretbox: the value does not open (tampered, or moved from another row)")
	}
	return string(out), id == b.current, nil
}
