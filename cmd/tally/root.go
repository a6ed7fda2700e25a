package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tally",
		Short: "Privacy-respecting web analytics with revenue attribution",
		Long: `tally ingests pageviews, custom events and payments, and serves aggregated
statistics. Configuration comes from TALLY_* environment variables (see README).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newMigrateCmd(), newUserCmd(), newSiteCmd(), newKeyCmd(), newRatesCmd(), newDemoCmd(),
		newExportCmd(), newRollupsCmd(), newHealthcheckCmd())
	return root
}

// env is what a subcommand works with: the configuration, a logger, and
// stores opened on demand.
type env struct {
	cfg *config.Config
	log *slog.Logger
	out io.Writer
}

func loadEnv(cmd *cobra.Command) (*env, error) {
	cfg, warnings, err := config.Load()
	if err != nil {
		return nil, err
	}
	log := newLogger(cfg, cmd.ErrOrStderr())
	for _, w := range warnings {
		log.Warn(w)
	}
	return &env{cfg: cfg, log: log, out: cmd.OutOrStdout()}, nil
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	level, err := cfg.SlogLevel()
	if err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogJSON() {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (e *env) postgres(ctx context.Context) (*pgstore.Store, error) {
	box, err := e.cfg.SecretBox()
	if err != nil {
		return nil, err
	}
	return pgstore.Open(ctx, e.cfg.PostgresURL, pgstore.WithSecrets(box))
}

func (e *env) clickhouse(ctx context.Context) (*chstore.Store, error) {
	return chstore.Open(ctx, app.CHOptions(e.cfg))
}

// siteNamed finds the site a command's flag names: 404 site_not_found on
// that flag when there is none.
func siteNamed(ctx context.Context, pg *pgstore.Store, id model.SiteID, flag string) (model.Site, error) {
	site, err := pg.SiteByID(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return site, errs.E(errs.NotFound, "site_not_found", "site %s not found", id).WithField(flag)
	}
	return site, err
}

// ownerFlag names --owner in the error of a command that finds the owning
// user by that flag: the accounts service names the user's email field.
func ownerFlag(err error) error {
	var e *errs.Error
	if errors.As(err, &e) && e.Field == "email" {
		return e.WithField("owner")
	}
	return err
}

// accounts opens what account administration needs; close releases it.
func (e *env) accounts(ctx context.Context) (svc *accounts.Service, closeFn func(), err error) {
	pg, err := e.postgres(ctx)
	if err != nil {
		return nil, nil, err
	}
	rdb, err := app.NewRedis(e.cfg)
	if err != nil {
		pg.Close()
		return nil, nil, err
	}
	svc = accounts.NewService(pg, auth.NewPasswords(2), auth.NewRedisRevocations(rdb, e.cfg.RedisPrefix, e.log),
		e.cfg.KeyEnvironment(), time.Now)
	return svc, func() { rdb.Close(); pg.Close() }, nil
}

// print writes v as indented JSON when asJSON, else the text.
func (e *env) print(asJSON bool, v any, text string) error {
	if asJSON {
		enc := json.NewEncoder(e.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(e.out, strings.TrimRight(text, "\n"))
	return err
}

func jsonFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "json", false, "print the result as JSON (for scripts)")
}

// fromStdin replaces a secret flag's value "-" with the first line of the
// standard input, so that the secret stays out of the process list and the
// shell's history (printf '%s\n' "$SECRET" | tally … --secret -).
func fromStdin(cmd *cobra.Command, v *string) error {
	if *v != "-" {
		return nil
	}
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("reading standard input: %w", err)
	}
	*v = strings.TrimRight(line, "\r\n")
	return nil
}

func requireFlags(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		_ = cmd.MarkFlagRequired(n)
	}
}

// withAccounts runs a subcommand body with the configuration and the
// accounts service, closing the connections afterwards.
func withAccounts(run func(cmd *cobra.Command, args []string, e *env, svc *accounts.Service) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		e, err := loadEnv(cmd)
		if err != nil {
			return err
		}
		svc, closeFn, err := e.accounts(cmd.Context())
		if err != nil {
			return err
		}
		defer closeFn()
		return run(cmd, args, e, svc)
	}
}
