package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/demo"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func newDemoCmd() *cobra.Command {
	var opts demo.Options
	var site string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo [--events N] [--site SITE_ID] [--days D]",
		Short: "Demo data: the demo account (setup) and synthetic traffic (--events)",
		Long: `demo --events N loads about N synthetic events (with their sessions) straight
into ClickHouse for a site, spread over the last --days days: realistic
sources, campaigns, devices, locations, pages and custom events, for demos and
benchmarks. Without --site it uses the demo site (see "tally demo setup").`,
		Example: `  tally demo --events 10000000 --days 30`,
		Args:    cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			if opts.Events <= 0 {
				return cmd.Help()
			}
			if site == "" {
				sites, err := svc.SitesOf(cmd.Context(), demoEmail)
				if err != nil || len(sites) == 0 {
					return errors.New("no demo site: run `tally demo setup` or pass --site")
				}
				site = string(sites[0].ID)
			}
			ch, err := e.clickhouse(cmd.Context())
			if err != nil {
				return err
			}
			defer ch.Close()
			opts.Site, opts.End = model.SiteID(site), time.Now().UTC()
			started := time.Now()
			opts.Progress = func(n int) {
				fmt.Fprintf(cmd.ErrOrStderr(), "\rdemo: %d of %d events (%.0f%%), %.0f events/s ", n, opts.Events,
					100*float64(n)/float64(opts.Events), float64(n)/time.Since(started).Seconds())
			}
			n, err := demo.Generate(cmd.Context(), ch, opts)
			fmt.Fprintln(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return e.print(asJSON, map[string]any{"site_id": site, "events": n, "seconds": time.Since(started).Seconds()},
				fmt.Sprintf("loaded %d events into site %s in %s", n, site, time.Since(started).Round(time.Millisecond)))
		}),
	}
	f := cmd.Flags()
	f.IntVar(&opts.Events, "events", 0, "number of events to generate")
	f.StringVar(&site, "site", "", "site id (default: the demo site)")
	f.IntVar(&opts.Days, "days", 30, "spread the traffic over this many days before now")
	f.Uint64Var(&opts.Seed, "seed", 1, "random seed (the same seed gives the same traffic)")
	jsonFlag(cmd, &asJSON)
	cmd.AddCommand(newDemoSetupCmd())
	return cmd
}

// Demo account of a local stack.
const (
	demoEmail    = "demo@tally.local"
	demoPassword = "tally-demo-password"
	demoDomain   = "localhost"
)

type demoResult struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	UserID   string `json:"user_id"`
	SiteID   string `json:"site_id"`
	KeyID    string `json:"key_id"`
	Key      string `json:"key"`
}

func newDemoSetupCmd() *cobra.Command {
	var keyFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "setup [--key-file PATH]",
		Short: "Create a demo user, site and API key unless they exist, and print them",
		Long: `setup makes sure the demo user (` + demoEmail + `), a site for ` + demoDomain + ` and an
API key exist, and prints them. A key's secret cannot be read back from the
database, so the key is kept in --key-file (mode 0600) and reused while valid.
For local development only.`,
		Args: cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			if e.cfg.Production() {
				return errors.New("demo setup is for development; TALLY_ENV is production")
			}
			res, err := demoSetup(cmd.Context(), svc, keyFile)
			if err != nil {
				return err
			}
			return e.print(asJSON, res, fmt.Sprintf(`demo login:  %s / %s
demo site:   %s (domain %s)
demo key:    %s (%s)
try:         curl -H 'Authorization: Bearer %s' http://localhost:8080/api/v1/auth/verify`,
				res.Email, res.Password, res.SiteID, demoDomain, res.Key, res.KeyID, res.Key))
		}),
	}
	cmd.Flags().StringVar(&keyFile, "key-file", "", "file that keeps the demo key between runs")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func demoSetup(ctx context.Context, svc *accounts.Service, keyFile string) (demoResult, error) {
	res := demoResult{Email: demoEmail, Password: demoPassword}
	user, err := svc.UserByEmail(ctx, demoEmail)
	if errs.Is(err, errs.NotFound) {
		user, err = svc.CreateUser(ctx, accounts.NewUser{Email: demoEmail, Password: demoPassword, Name: "Demo", Plan: model.PlanPro})
	}
	if err != nil {
		return res, err
	}
	res.UserID = string(user.ID)
	sites, err := svc.SitesOf(ctx, demoEmail)
	if err != nil {
		return res, err
	}
	if len(sites) == 0 {
		site, err := svc.CreateSite(ctx, accounts.NewSite{OwnerEmail: demoEmail, Domain: demoDomain})
		if err != nil {
			return res, err
		}
		sites = append(sites, site)
	}
	res.SiteID = string(sites[0].ID)
	if keyID, secret, ok := readKeyFile(ctx, svc, keyFile); ok {
		res.KeyID, res.Key = keyID, secret
		return res, nil
	}
	k, err := svc.CreateKey(ctx, accounts.NewKey{OwnerEmail: demoEmail, Name: "demo"})
	if err != nil {
		return res, err
	}
	res.KeyID, res.Key = string(k.Key.ID), k.Secret
	if keyFile != "" {
		if err := os.WriteFile(keyFile, []byte(res.KeyID+" "+res.Key+"\n"), 0o600); err != nil {
			return res, fmt.Errorf("write key file: %w", err)
		}
	}
	return res, nil
}

// readKeyFile returns the kept demo key if it is still active.
func readKeyFile(ctx context.Context, svc *accounts.Service, path string) (keyID, secret string, ok bool) {
	if path == "" {
		return "", "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", false
	}
	keyID, secret, _ = strings.Cut(strings.TrimSpace(string(b)), " ")
	keys, err := svc.ListKeys(ctx, demoEmail)
	if err != nil {
		return "", "", false
	}
	for _, k := range keys {
		if string(k.ID) == keyID && k.RevokedAt == nil && k.ExpiresAt == nil && strings.HasPrefix(secret, k.Prefix) {
			return keyID, secret, true
		}
	}
	return "", "", false
}
