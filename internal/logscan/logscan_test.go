// Package logscan checks the log of a whole test run: no credential, secret,
// password or client address may appear in what tally logs. It runs after
// the other tests (go tool task test runs it last, with TALLY_TEST_LOG_SCAN=1).
package logscan

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// forbidden are what the tests send that must never be logged.
var forbidden = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an API key", regexp.MustCompile(`sk_(test|live)_[0-9A-Za-z]{8,}`)},
	{"a login token (JWT)", regexp.MustCompile(`eyJ[0-9A-Za-z_-]{10,}\.[0-9A-Za-z_-]{10,}`)},
	{"a test password", regexp.MustCompile(`correct horse battery|password-1|tally-demo-password|wrong password`)},
	{"a webhook secret", regexp.MustCompile(`whsec_[0-9A-Za-z+/=_]{6,}|lemon-squeezy-signing-secret|pdl_ntfset_`)},
	{"a JWT signing secret", regexp.MustCompile(`test-secret-test-secret`)},
	// the email reports: the SMTP password of the tests' mail server, and
	// the recipients' addresses (personal data of a site's team)
	{"an SMTP password", regexp.MustCompile(`smtp-password-\d`)},
	{"an email report's recipient", regexp.MustCompile(`@reports\.example`)},
	// two-factor authentication: a TOTP secret (20 bytes in base32) or its
	// otpauth:// URI, a recovery code (XXXX-XXXX-XXXX-XXXX), and a 6-digit
	// code under the names a form, a body or an attribute gives it
	{"a TOTP secret", regexp.MustCompile(`otpauth://|\b[A-Z2-7]{32}\b`)},
	{"a recovery code", regexp.MustCompile(`\b[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}\b`)},
	{"a one-time code", regexp.MustCompile(`(?i)\b(otp|totp|code)\b["']?\s*[:=]\s*["']?\d{6}\b`)},
	// passwords: the link of a forgotten password (its token is 32 bytes
	// in base64url, in the link's path or a form's field), and the
	// addresses of the password tests' accounts
	{"a password-reset link", regexp.MustCompile(`/login/reset/[0-9A-Za-z_-]{43}|\btoken=[0-9A-Za-z_-]{43}\b`)},
	{"an address of the password tests", regexp.MustCompile(`@passwords\.example`)},
	// every client address the tests use: documentation ranges, the geo
	// fixtures, private and Googlebot addresses
	{"a client address", regexp.MustCompile(`\b(81\.2\.(69|70|71)|216\.160\.83|67\.43\.156|203\.0\.113|198\.51\.100|10\.0\.0|66\.249\.66)\.\d{1,3}\b`)},
}

func TestLogsHoldNoSecrets(t *testing.T) {
	if os.Getenv("TALLY_TEST_LOG_SCAN") != "1" {
		t.Skip("runs after the other tests, with TALLY_TEST_LOG_SCAN=1 (go tool task test)")
	}
	dir := os.Getenv("TALLY_TEST_LOG_DIR")
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if dir == "" || len(files) == 0 {
		t.Fatalf("no test-run log in TALLY_TEST_LOG_DIR=%q: the integration tests did not log", dir)
	}
	lines := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			lines++
			line := sc.Text()
			for _, f := range forbidden {
				if f.re.MatchString(line) {
					t.Errorf("%s in the log, %s:%d: %s", f.what, filepath.Base(fh.Name()), n, trim(line))
				}
			}
		}
		fh.Close()
	}
	if lines < 100 {
		t.Errorf("the run's log has %d lines; the integration tests log far more", lines)
	}
	t.Logf("scanned %d lines in %d files", lines, len(files))
}

// The patterns catch what the tests send, as it would be logged.
func TestPatternsCatchTheTestsValues(t *testing.T) {
	for _, line := range []string{
		`level=INFO msg=login otp=492039`,
		`{"email":"owner@example.com","password":"x","otp":"492039"}`,
		`form code=049231 next=/sites`,
		`level=DEBUG msg=setup secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP`,
		`uri="otpauth://totp/tally:owner%40example.com?secret=JBSW"`,
		`level=WARN msg="recovery" value=K7QX-M2PD-9WRT-ZH4E`,
		`level=INFO msg=request path=/login/reset/q3_7Hx-2kLmNpQrStUvWxYz0123456789AbCdEfGhIj`,
		`form token=q3_7Hx-2kLmNpQrStUvWxYz0123456789AbCdEfGhIj&new_password=x`,
		`level=WARN msg="password resets" to=ada@passwords.example`,
	} {
		caught := false
		for _, f := range forbidden {
			caught = caught || f.re.MatchString(line)
		}
		if !caught {
			t.Errorf("not caught: %s", line)
		}
	}
	for _, line := range []string{
		`level=INFO msg="dashboard request" status code=200 took=123456`,
		`request_id=0a1b2c3d4e5f6789 site_id=site_ABCD2345 user=4f1c3a2e-9b7d-4c1e-8f2a-1234567890ab`,
		`level=ERROR msg="dashboard request failed" method=GET route=/login/reset/:token`,
	} {
		for _, f := range forbidden {
			if f.re.MatchString(line) {
				t.Errorf("%s taken for %s", line, f.what)
			}
		}
	}
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
