package twofactor

import (
	"strings"

	"github.com/tally-analytics/tally/internal/auth"
)

// recoveryAlphabet has no 0, O, 1 or I, which are read one for the other.
const recoveryAlphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// recoveryLen is a code's characters: 16 of 32 symbols, 80 random bits, so
// that its SHA-256 is as safe to keep as an API key's.
const recoveryLen = 16

// newRecoveryCodes makes RecoveryCodes codes, written XXXX-XXXX-XXXX-XXXX,
// and the hashes to keep of them.
func newRecoveryCodes() (codes []string, hashes [][]byte) {
	for range RecoveryCodes {
		raw := auth.RandomString(recoveryLen, recoveryAlphabet)
		codes = append(codes, raw[0:4]+"-"+raw[4:8]+"-"+raw[8:12]+"-"+raw[12:16])
		hashes = append(hashes, auth.HashKey(raw))
	}
	return codes, hashes
}

// normalizeRecoveryCode is a recovery code as typed, without its dashes and
// spaces and in capitals, and whether it can be one at all.
func normalizeRecoveryCode(code string) (string, bool) {
	code = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(code) != recoveryLen {
		return "", false
	}
	for _, r := range code {
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return "", false
		}
	}
	return code, true
}
