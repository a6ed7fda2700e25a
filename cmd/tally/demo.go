package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func newDemoCmd() *cobra.Command {
	var run demoRun
	cmd := &cobra.Command{
		Use:   "demo --events N [--site SITE_ID] [--days D] [--seed S] [--payments N] [--if-empty]",
		Short: "Demo data: the demo account (setup), and a realistic site's traffic, goals and payments (--events)",
		Long: `demo --events N loads about N events of a realistic site into a site (by
default the demo site of "tally demo setup"), spread over the last --days
days (whole days from midnight UTC, and today up to now, as the dashboard's
"last 30 days" reads them), ending with visitors shown as on the site now:

  visitors   a pool of people who keep their device, browser, system, country,
             region and city on every visit, and come back over the days
             (mostly typed in or searched for); existing customers log in
  sources    search engines, an AI assistant, social sites, a launch spike
             (Product Hunt), a front page (Hacker News), a weekly newsletter,
             a brand search campaign and a paid social campaign, each with
             its own landing pages, devices, bounce rate and intent to buy
  pages      home, pricing, features, docs (long reads), blog (mostly
             single-page visits), sign-up and checkout, each with its own
             time on page and bounce rate
  events     signup, checkout_started, copy_snippet, download,
             newsletter_subscribe and outbound_click, all with props
  goals      Signed up, Started checkout, Bought (/checkout/success), Read
             the docs (/docs/**), Downloaded, created unless the site has them
  bots       crawlers, AI agents, monitors and others, filtered out and
             counted (5 per 100 events)
  payments   the checkouts' payments from the four providers (provider_a
             subscriptions and one-time checkouts, provider_b licences,
             provider_c business plans, provider_d supporters), renewals of
             older subscriptions, failed attempts and refunds, in the
             customers' currencies (USD, EUR, GBP, JPY, CAD, AUD) with their
             tax; recorded through the revenue service, which attributes
             them to the buyers' visits and converts them into the site's
             base currency, then exported to ClickHouse

Events, sessions and bot events go straight into ClickHouse in batches of
100,000, fast enough for benchmarks (tens of millions of events). Payments
are about one per 100 events and each costs a few Postgres queries (their
attribution reads the buyer's sessions from the load's memory, not from
ClickHouse), so at most --payments of them are recorded: past that, a random
sample of whole payments (each with its refund). Days without an exchange
rate get an approximate reference rate (rates already stored are never
replaced), so that the payments convert.

The same --seed and end time give the same traffic. With --if-empty nothing
is loaded when the site already has events: "go tool task up" loads the demo
once. Progress goes to stderr. For development and benchmarks only: refused
when TALLY_ENV is production.`,
		Example: `  tally demo setup
  tally demo --events 100000 --if-empty          # what "go tool task up" runs
  tally demo --events 10000000 --site SITE_ID    # a benchmark's site
  tally demo --events 50000 --days 7 --seed 42 --payments 0 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run.opts.Events <= 0 {
				return cmd.Help()
			}
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			if e.cfg.Production() {
				return errors.New("demo data is for development; TALLY_ENV is production")
			}
			return run.load(cmd.Context(), e, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&run.opts.Events, "events", 0, "number of events to generate (pageviews and custom events)")
	f.StringVar(&run.site, "site", "", "site id (default: the demo site)")
	f.IntVar(&run.opts.Days, "days", 30, "the number of days, up to today, the traffic spans")
	f.Uint64Var(&run.opts.Seed, "seed", 1, "random seed (the same seed and end time give the same traffic)")
	f.IntVar(&run.opts.MaxPayments, "payments", 5000, "record at most this many payments, renewals and refunds (0: none)")
	f.BoolVar(&run.ifEmpty, "if-empty", false, "load nothing when the site already has events (load the demo once)")
	jsonFlag(cmd, &run.asJSON)
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
