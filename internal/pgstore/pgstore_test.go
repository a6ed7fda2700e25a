package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/secretbox"
	"github.com/tally-analytics/tally/internal/testenv"
)

func open(t *testing.T) *pgstore.Store {
	t.Helper()
	return openWith(t, testenv.Postgres(t), testKey(1))
}

// ownerOf is a new free-plan user (o@example.com) who owns the sites of
// ids, each named <id>.example, in UTC and USD.
func ownerOf(t *testing.T, s *pgstore.Store, ids ...model.SiteID) model.User {
	t.Helper()
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "o@example.com", Name: "O", PasswordHash: "h", Plan: model.PlanFree})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := s.CreateSite(ctx, model.Site{ID: id, Domain: string(id) + ".example", Timezone: "UTC", BaseCurrency: "USD"}, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// openWith opens the database at url sealing secrets with the first key
// and opening them with any.
func openWith(t *testing.T, url string, keys ...[]byte) *pgstore.Store {
	t.Helper()
	box, err := secretbox.New(keys[0], keys[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.Open(context.Background(), url, pgstore.WithSecrets(box))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, secretbox.KeySize) }

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	s := open(t) // testenv migrated it once already
	ctx := context.Background()
	var wg sync.WaitGroup
	errsCh := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			applied, err := s.Migrate(ctx)
			if err == nil && len(applied) != 0 {
				err = errors.New("migrations applied twice")
			}
			errsCh <- err
		})
	}
	wg.Wait()
	close(errsCh)
	for err := range errsCh {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestUsersSitesMembers(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "Ada@Example.com", Name: "Ada", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || u.Plan != model.PlanPro || u.CreatedAt.IsZero() {
		t.Errorf("created user %+v", u)
	}
	if _, err := s.CreateUser(ctx, model.User{Email: "ada@example.COM", Name: "Other", PasswordHash: "h", Plan: model.PlanFree}); !errors.Is(err, errs.ErrConflict) {
		t.Errorf("duplicate email (other case): err = %v, want ErrConflict", err)
	}
	got, err := s.UserByEmail(ctx, "ADA@example.com")
	if err != nil || got.ID != u.ID {
		t.Errorf("UserByEmail = %+v, %v", got, err)
	}
	if _, err := s.UserByEmail(ctx, "nobody@example.com"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("unknown email: err = %v, want ErrNotFound", err)
	}

	site, err := s.CreateSite(ctx, model.Site{ID: "site1", Domain: "example.com", Timezone: "Europe/Berlin", BaseCurrency: "EUR"}, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if site.Timezone != "Europe/Berlin" || site.BaseCurrency != "EUR" {
		t.Errorf("site %+v", site)
	}
	if role, err := s.MemberRole(ctx, "site1", u.ID); err != nil || role != model.RoleOwner {
		t.Errorf("owner role = %q, %v", role, err)
	}
	viewer, _ := s.CreateUser(ctx, model.User{Email: "v@example.com", Name: "V", PasswordHash: "h", Plan: model.PlanFree})
	if _, err := s.MemberRole(ctx, "site1", viewer.ID); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("non-member: err = %v, want ErrNotFound", err)
	}
	if err := s.AddMember(ctx, "site1", viewer.ID, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if role, _ := s.MemberRole(ctx, "site1", viewer.ID); role != model.RoleViewer {
		t.Errorf("viewer role = %q", role)
	}
	sites, err := s.SitesByUser(ctx, viewer.ID)
	if err != nil || len(sites) != 1 || sites[0].ID != "site1" {
		t.Errorf("SitesByUser = %+v, %v", sites, err)
	}
	if err := setSecrets(ctx, s, "site1", model.ProviderA, "whsec_1"); err != nil {
		t.Fatal(err)
	}
	if err := setSecrets(ctx, s, "site1", model.ProviderA, "whsec_2"); err != nil {
		t.Fatal(err)
	}
	if sec, err := s.ProviderSecrets(ctx, "site1", model.ProviderA); err != nil || !slices.Equal(sec, []string{"whsec_2"}) {
		t.Errorf("ProviderSecrets = %q, %v; want the replaced secret", sec, err)
	}
}

// setSecrets replaces a site's secrets for p.
func setSecrets(ctx context.Context, s *pgstore.Store, site model.SiteID, p model.Provider, secrets ...string) error {
	return s.UpdateProviderSecrets(ctx, site, p, func([]string) ([]string, error) { return secrets, nil })
}

// A provider's secrets are sealed together, in their order; an update sees
// those set and may keep them; a refused update changes nothing; the
// settings count them without showing them.
func TestProviderSecretsList(t *testing.T) {
	url := testenv.Postgres(t)
	s := openWith(t, url, testKey(1))
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "list@example.com", Name: "L", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSite(ctx, model.Site{ID: "s1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ProviderSecrets(ctx, "s1", model.ProviderA); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("no secrets: %v, want ErrNotFound", err)
	}
	if err := setSecrets(ctx, s, "s1", model.ProviderA, "whsec_live", "whsec_test"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = s.UpdateProviderSecrets(ctx, "s1", model.ProviderA, func(current []string) ([]string, error) {
		seen = current
		return append(slices.Clone(current), "whsec_new"), nil
	})
	if err != nil || !slices.Equal(seen, []string{"whsec_live", "whsec_test"}) {
		t.Errorf("update saw %q, %v", seen, err)
	}
	refused := errors.New("refused")
	if err := s.UpdateProviderSecrets(ctx, "s1", model.ProviderA, func([]string) ([]string, error) { return nil, refused }); err != refused {
		t.Errorf("refused update: %v, want its own error", err)
	}
	want := []string{"whsec_live", "whsec_test", "whsec_new"}
	if got, err := s.ProviderSecrets(ctx, "s1", model.ProviderA); err != nil || !slices.Equal(got, want) {
		t.Errorf("ProviderSecrets = %q, %v; want %q", got, err, want)
	}
	states, err := s.ProviderSecretStates(ctx, "s1")
	if err != nil || len(states) != 1 || states[0].Provider != model.ProviderA || states[0].Count != 3 {
		t.Errorf("ProviderSecretStates = %+v, %v; want provider_a with 3", states, err)
	}
}

// Webhook signing secrets are sealed at rest: before, the column held
// "whsec_..." as sent. A secret stored in the clear before sealing existed
// still opens and is sealed by ResealSecrets; a key rotation reseals with the
// new key; a sealed value moved to another row does not open.
func TestProviderSecretsSealed(t *testing.T) {
	url := testenv.Postgres(t)
	s := openWith(t, url, testKey(1))
	ctx := context.Background()
	u, err := s.CreateUser(ctx, model.User{Email: "sec@example.com", Name: "S", PasswordHash: "h", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSite(ctx, model.Site{ID: "s1", Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}, u.ID); err != nil {
		t.Fatal(err)
	}
	raw, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	column := func(p model.Provider) string {
		t.Helper()
		var v string
		if err := raw.QueryRow(ctx, "SELECT secret FROM site_provider_secrets WHERE site_id = 's1' AND provider = $1", string(p)).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := setSecrets(ctx, s, "s1", model.ProviderA, "whsec_plain_a"); err != nil {
		t.Fatal(err)
	}
	if v := column(model.ProviderA); strings.Contains(v, "whsec") || !strings.HasPrefix(v, "v1:"+secretbox.KeyID(testKey(1))+":") {
		t.Errorf("stored secret %q: not sealed with the key", v)
	}
	// stored in the clear by an earlier release
	if _, err := raw.Exec(ctx, "INSERT INTO site_provider_secrets (site_id, provider, secret) VALUES ('s1', $1, 'whsec_legacy_b')",
		string(model.ProviderB)); err != nil {
		t.Fatal(err)
	}
	if sec, err := s.ProviderSecrets(ctx, "s1", model.ProviderB); err != nil || !slices.Equal(sec, []string{"whsec_legacy_b"}) {
		t.Errorf("legacy secret: %q, %v", sec, err)
	}
	if n, err := s.ResealSecrets(ctx); err != nil || n != 1 {
		t.Errorf("ResealSecrets = %d, %v; want the legacy one", n, err)
	}
	if v := column(model.ProviderB); strings.Contains(v, "whsec") {
		t.Errorf("legacy secret still in the clear after resealing: %q", v)
	}
	// rotation: key 2 seals, key 1 still opens
	rotated := openWith(t, url, testKey(2), testKey(1))
	if n, err := rotated.ResealSecrets(ctx); err != nil || n != 2 {
		t.Errorf("ResealSecrets after rotation = %d, %v; want 2", n, err)
	}
	onlyNew := openWith(t, url, testKey(2))
	for p, want := range map[model.Provider]string{model.ProviderA: "whsec_plain_a", model.ProviderB: "whsec_legacy_b"} {
		if sec, err := onlyNew.ProviderSecrets(ctx, "s1", p); err != nil || !slices.Equal(sec, []string{want}) {
			t.Errorf("after rotation, %s: %q, %v", p, sec, err)
		}
	}
	if _, err := s.ProviderSecrets(ctx, "s1", model.ProviderA); err == nil {
		t.Error("the old key alone opened a secret sealed with the new one")
	}
	// a sealed value copied to another row
	if _, err := raw.Exec(ctx, "INSERT INTO site_provider_secrets (site_id, provider, secret) VALUES ('s1', $1, $2)",
		string(model.ProviderC), column(model.ProviderA)); err != nil {
		t.Fatal(err)
	}
	if _, err := onlyNew.ProviderSecrets(ctx, "s1", model.ProviderC); err == nil {
		t.Error("a sealed secret moved to another provider's row opened")
	}
}

func TestKeys(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, model.User{Email: "k@example.com", Name: "K", PasswordHash: "h", Plan: model.PlanFree})
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	hash := bytes.Repeat([]byte{7}, 32)
	k, err := s.CreateKey(ctx, model.APIKey{ID: "key_1", UserID: u.ID, Name: "ci", Prefix: "sk_test_abcd", Environment: "test",
		Scopes: []model.Scope{model.ScopeStatsRead}, ExpiresAt: &exp}, hash)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.KeyByHash(ctx, hash)
	if err != nil || got.ID != k.ID || len(got.Scopes) != 1 || got.Scopes[0] != model.ScopeStatsRead || !got.ExpiresAt.Equal(exp) {
		t.Errorf("KeyByHash = %+v, %v", got, err)
	}
	if _, err := s.CreateKey(ctx, model.APIKey{ID: "key_2", UserID: u.ID, Name: "dup", Prefix: "p", Environment: "test"}, hash); !errors.Is(err, errs.ErrConflict) {
		t.Errorf("duplicate hash: err = %v, want ErrConflict", err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.TouchKeys(ctx, map[model.KeyID]time.Time{"key_1": at}); err != nil {
		t.Fatal(err)
	}
	first := at.Add(-time.Minute)
	revoked, err := s.RevokeKey(ctx, "key_1", first)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(first) {
		t.Fatalf("RevokeKey = %+v, %v", revoked, err)
	}
	again, _ := s.RevokeKey(ctx, "key_1", at)
	if !again.RevokedAt.Equal(first) {
		t.Errorf("a second revocation moved revoked_at to %v", again.RevokedAt)
	}
	if again.LastUsedAt == nil || !again.LastUsedAt.Equal(at) {
		t.Errorf("last_used_at = %v, want %v", again.LastUsedAt, at)
	}
	if _, err := s.RevokeKey(ctx, "key_nope", at); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("revoke unknown: err = %v", err)
	}
	keys, err := s.KeysByUser(ctx, u.ID)
	if err != nil || len(keys) != 1 {
		t.Errorf("KeysByUser = %d keys, %v", len(keys), err)
	}
}

func TestSalts(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	first, err := s.Salt(ctx, day, []byte("aaaa"))
	if err != nil || string(first) != "aaaa" {
		t.Fatalf("Salt = %q, %v", first, err)
	}
	second, _ := s.Salt(ctx, day, []byte("bbbb"))
	if string(second) != "aaaa" {
		t.Errorf("a second candidate replaced the day's salt: %q", second)
	}
	if err := s.DeleteSaltsBefore(ctx, day.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	third, _ := s.Salt(ctx, day, []byte("cccc"))
	if string(third) != "cccc" {
		t.Errorf("deleted salt still served: %q", third)
	}
}
