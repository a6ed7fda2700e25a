package chstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// lastTouchColumns are the columns 0006_payments_last_touch adds, in its order.
var lastTouchColumns = []string{"lt_source", "lt_source_type", "lt_entry_page", "lt_utm_source", "lt_utm_medium",
	"lt_utm_campaign", "lt_utm_content", "lt_country_code", "lt_device"}

// undoLastTouch puts a migrated database back to before 0006 (the columns
// from drop on, and its version), as a database of an older release, or one
// whose migration stopped after the first columns.
func undoLastTouch(t *testing.T, s *chstore.Store, drop int) {
	t.Helper()
	ctx := context.Background()
	var stmts []string
	for _, col := range lastTouchColumns[drop:] {
		stmts = append(stmts, "DROP COLUMN "+col)
	}
	for _, stmt := range []string{
		"ALTER TABLE payments " + strings.Join(stmts, ", "),
		"RENAME TABLE schema_migrations TO schema_migrations_before",
		"CREATE TABLE schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = MergeTree ORDER BY version",
		"INSERT INTO schema_migrations SELECT version, name, applied_at FROM schema_migrations_before WHERE version != 6",
	} {
		if err := s.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

func lastTouchOf(t *testing.T, s *chstore.Store, paymentID string) model.Touch {
	t.Helper()
	var lt model.Touch
	err := s.QueryRow(context.Background(), `SELECT lt_source, lt_source_type, lt_entry_page, lt_utm_source, lt_utm_medium,
		lt_utm_campaign, lt_utm_content, lt_country_code, lt_device FROM payments WHERE payment_id = ?`, paymentID).
		Scan(&lt.Source, &lt.SourceType, &lt.EntryPage, &lt.UTMSource, &lt.UTMMedium, &lt.UTMCampaign, &lt.UTMContent,
			&lt.CountryCode, &lt.Device)
	if err != nil {
		t.Fatalf("last touch of %s: %v", paymentID, err)
	}
	return lt
}

// A payment written before 0006 reads its last non-direct attribution as
// its last touch; one written after reads what the exporter wrote, and a
// ledger row without a last touch (recorded before it was kept) is written
// with its last non-direct one.
func TestPaymentsLastTouch(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	undoLastTouch(t, s, 0)
	if err := s.Exec(ctx, `INSERT INTO payments (site_id, ts, payment_id, provider, transaction_id, kind, amount, currency,
		base_amount, base_currency, visitor_id, event_name, attributed, source, source_type, entry_page, utm_source,
		utm_medium, utm_campaign, utm_content, country_code, device, ft_source, written_at)
		SELECT 's1', toDateTime('2026-05-04 10:00:00'), 'old', 'api', 'tx-old', 'payment', 100, 'EUR', 100, 'EUR', 7, 'payment', 1,
		'Google', 'search', '/features', 'google', 'cpc', 'spring', 'ad', 'DE', 'Desktop', 'Twitter', toDateTime('2026-05-04 10:00:00')`); err != nil {
		t.Fatal(err)
	}
	applied, err := s.Migrate(ctx)
	if err != nil || len(applied) != 1 || applied[0] != "0006_payments_last_touch" {
		t.Fatalf("Migrate = %v, %v; want 0006 applied", applied, err)
	}
	google := model.Touch{Source: "Google", SourceType: "search", EntryPage: "/features", UTMSource: "google", UTMMedium: "cpc",
		UTMCampaign: "spring", UTMContent: "ad", CountryCode: "DE", Device: "Desktop"}
	if diff := cmp.Diff(google, lastTouchOf(t, s, "old")); diff != "" {
		t.Errorf("a payment from before 0006 (-want +got):\n%s", diff)
	}

	direct := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/pricing", CountryCode: "FR", Device: "Mobile"}
	base := int64(100)
	at := time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)
	rows := []model.Payment{
		{ID: "new", SiteID: "s1", Provider: "api", TransactionID: "tx-new", Kind: model.KindPayment, Amount: 100, Currency: "EUR",
			OccurredAt: at, BaseCurrency: "EUR", BaseAmount: &base, VisitorID: 7, EventName: "payment",
			Attribution: &model.PaymentAttribution{LastNonDirect: google, First: google, Latest: &direct}},
		{ID: "ledger-old", SiteID: "s1", Provider: "api", TransactionID: "tx-ledger-old", Kind: model.KindPayment, Amount: 100,
			Currency: "EUR", OccurredAt: at, BaseCurrency: "EUR", BaseAmount: &base, VisitorID: 7, EventName: "payment",
			Attribution: &model.PaymentAttribution{LastNonDirect: google, First: google}},
	}
	if err := s.InsertPayments(ctx, rows, at); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(direct, lastTouchOf(t, s, "new")); diff != "" {
		t.Errorf("a payment with a last touch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(google, lastTouchOf(t, s, "ledger-old")); diff != "" {
		t.Errorf("a ledger row without a last touch (-want +got):\n%s", diff)
	}
}

// 0006 stopped after its first five columns (a crash, or a second server
// migrating at the same time) finishes on the next run: ClickHouse 18.16
// has no ADD COLUMN IF NOT EXISTS, so a column that exists counts as added.
func TestPaymentsLastTouchMigrationResumes(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	undoLastTouch(t, s, 5)
	applied, err := s.Migrate(ctx)
	if err != nil || len(applied) != 1 || applied[0] != "0006_payments_last_touch" {
		t.Fatalf("Migrate = %v, %v; want 0006 finished", applied, err)
	}
	if err := s.Exec(ctx, "SELECT "+strings.Join(lastTouchColumns, ", ")+" FROM payments"); err != nil {
		t.Errorf("the columns after the resumed migration: %v", err)
	}
}
