package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// TOTP secrets are sealed, bound to their user, and resealed on a key
// rotation like the webhook secrets: after it, the new key alone opens them.
func TestTOTPSecretsSealedAndResealed(t *testing.T) {
	url := testenv.Postgres(t)
	s := openWith(t, url, testKey(1))
	ctx := context.Background()
	var users []model.User
	for _, email := range []string{"a@example.com", "b@example.com"} {
		u, err := s.CreateUser(ctx, model.User{Email: email, Name: "U", PasswordHash: "h", Plan: model.PlanFree})
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	if err := s.SetPendingTOTP(ctx, users[0].ID, secret); err != nil {
		t.Fatal(err)
	}
	raw, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	var stored string
	if err := raw.QueryRow(ctx, "SELECT secret FROM user_totp WHERE user_id = $1", string(users[0].ID)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, secret) || !strings.HasPrefix(stored, "v1:") {
		t.Fatalf("stored TOTP secret %q: not sealed", stored)
	}
	rotated := openWith(t, url, testKey(2), testKey(1))
	if n, err := rotated.ResealSecrets(ctx); err != nil || n != 1 {
		t.Fatalf("ResealSecrets after rotation = %d, %v; want the TOTP secret", n, err)
	}
	if got, err := openWith(t, url, testKey(2)).TOTP(ctx, users[0].ID); err != nil || got.Secret != secret {
		t.Fatalf("after rotation, the new key alone opens %q, %v", got.Secret, err)
	}
	// moved to another user's row, it does not open
	if _, err := raw.Exec(ctx, "INSERT INTO user_totp (user_id, secret) SELECT $2, secret FROM user_totp WHERE user_id = $1",
		string(users[0].ID), string(users[1].ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.TOTP(ctx, users[1].ID); err == nil {
		t.Fatal("a TOTP secret copied to another user opened")
	}
}
