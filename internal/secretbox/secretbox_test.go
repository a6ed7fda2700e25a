package secretbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestSealOpen(t *testing.T) {
	box, err := New(key(1))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("whsec_plain", "site1/provider_a")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "whsec") || !strings.HasPrefix(sealed, "v1:"+KeyID(key(1))+":") {
		t.Errorf("sealed value %q shows the secret or lacks the key id", sealed)
	}
	again, _ := box.Seal("whsec_plain", "site1/provider_a")
	if again == sealed {
		t.Error("two seals of one secret are equal: the nonce is not random")
	}
	plain, current, err := box.Open(sealed, "site1/provider_a")
	if err != nil || plain != "whsec_plain" || !current {
		t.Errorf("Open = %q, %v, %v", plain, current, err)
	}
	// moved to another row: does not open
	if _, _, err := box.Open(sealed, "site2/provider_a"); err == nil {
		t.Error("a value moved to another row opened")
	}
	// tampered
	raw := []byte(sealed)
	raw[len(raw)-2] ^= 1
	if _, _, err := box.Open(string(raw), "site1/provider_a"); err == nil {
		t.Error("a tampered value opened")
	}
}

// Rotation: a box with a new key and the old one opens both, says which
// values need sealing again, and a box without the old key refuses them.
func TestRotation(t *testing.T) {
	old, _ := New(key(1))
	sealed, _ := old.Seal("s3cret-value", "a")
	rotated, err := New(key(2), key(1))
	if err != nil {
		t.Fatal(err)
	}
	plain, current, err := rotated.Open(sealed, "a")
	if err != nil || plain != "s3cret-value" || current {
		t.Errorf("old value with the rotated box: %q, current %v, %v", plain, current, err)
	}
	resealed, _ := rotated.Seal(plain, "a")
	if _, current, _ := rotated.Open(resealed, "a"); !current {
		t.Error("a value sealed with the current key is not current")
	}
	onlyNew, _ := New(key(2))
	if _, _, err := onlyNew.Open(sealed, "a"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old value without the old key: %v, want ErrUnknownKey", err)
	}
	// stored before sealing existed: returned as is, not current
	if plain, current, err := rotated.Open("whsec_legacy", "a"); plain != "whsec_legacy" || current || err != nil {
		t.Errorf("legacy plaintext: %q, %v, %v", plain, current, err)
	}
}

func TestParseKey(t *testing.T) {
	k := key(7)
	for _, s := range []string{base64.StdEncoding.EncodeToString(k), base64.RawURLEncoding.EncodeToString(k) + "\n"} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, k) {
			t.Errorf("ParseKey(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "short", base64.StdEncoding.EncodeToString(k[:16])} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) accepted a bad key", s)
		}
	}
	if _, err := New(k[:16]); err == nil {
		t.Error("New accepted a 16-byte key")
	}
}
