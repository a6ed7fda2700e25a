package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
)

func newMigrateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the Postgres and ClickHouse migrations that are not applied yet",
		Long: `migrate applies tally's embedded, numbered, forward-only migrations to Postgres
and ClickHouse (creating the ClickHouse database if needed). It is safe to run
repeatedly. Run it once, before tally servers start or are upgraded: a
migration that builds rollups or copies from the stored rows (0005_page_rollups,
0008_rollups, 0009_site_days, 0010_visitor_blocks, 0011_small_granules,
0013_country_days, 0014_events_by_path, 0015_day_sums, 0018_known_visitors)
would count events inserted while it runs twice. Such a migration reads every
stored event in one statement: migrate waits up to 6 hours for each (not
TALLY_CLICKHOUSE_TIMEOUT).

It also seals again, with TALLY_SECRETS_KEY, every webhook signing secret
stored before secrets were sealed or sealed with a key now listed in
TALLY_SECRETS_OLD_KEYS: to rotate the key, set the new one, move the old one
to TALLY_SECRETS_OLD_KEYS, run migrate, then drop the old key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			res, err := migrateAll(cmd.Context(), e)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("postgres: %s\nclickhouse: %s\nwebhook secrets sealed again with the current key: %d",
				describeApplied(res.Postgres), describeApplied(res.ClickHouse), res.SecretsResealed)
			return e.print(asJSON, res, text)
		},
	}
	jsonFlag(cmd, &asJSON)
	return cmd
}

type migrateResult struct {
	Postgres   []string `json:"postgres"`
	ClickHouse []string `json:"clickhouse"`
	// SecretsResealed counts the webhook secrets sealed again with the
	// current TALLY_SECRETS_KEY (stored before sealing, or with an old key).
	SecretsResealed int `json:"secrets_resealed"`
}

func migrateAll(ctx context.Context, e *env) (migrateResult, error) {
	res := migrateResult{Postgres: []string{}, ClickHouse: []string{}}
	pg, err := e.postgres(ctx)
	if err != nil {
		return res, err
	}
	defer pg.Close()
	applied, err := pg.Migrate(ctx)
	res.Postgres = append(res.Postgres, applied...)
	if err != nil {
		return res, err
	}
	// a key made up for this process would leave the secrets unreadable
	if !e.cfg.SecretsKeyEphemeral() {
		if res.SecretsResealed, err = pg.ResealSecrets(ctx); err != nil {
			return res, err
		}
	}
	// a backfill reads every stored event in one statement, and ClickHouse
	// answers nothing until it is done (on 110M events, minutes): wait for
	// it rather than give up after TALLY_CLICKHOUSE_TIMEOUT
	opts := app.CHOptions(e.cfg)
	opts.Timeout = max(opts.Timeout, migrateTimeout)
	ch, err := chstore.Open(ctx, opts)
	if err != nil {
		return res, err
	}
	defer ch.Close()
	applied, err = ch.Migrate(ctx)
	res.ClickHouse = append(res.ClickHouse, applied...)
	return res, err
}

// migrateTimeout is the longest migrate waits for one ClickHouse statement.
const migrateTimeout = 6 * time.Hour

func describeApplied(names []string) string {
	if len(names) == 0 {
		return "up to date"
	}
	return "applied " + strings.Join(names, ", ")
}
