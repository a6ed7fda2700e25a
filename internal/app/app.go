// Package app wires tally together: config → pools → stores → services →
// HTTP API, plus the background work (write-buffer flusher, key usage,
// visitor salts, email reports, traffic spike notifications). The serve command and the end-to-end tests
// build the same App, so what the tests exercise is what runs.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/exclusions"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/funnels"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/ingest/buffer"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/referrer"
	"github.com/tally-analytics/tally/internal/ingest/session"
	"github.com/tally-analytics/tally/internal/ingest/useragent"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/passwords"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/revenue"
	"github.com/tally-analytics/tally/internal/segments"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/internal/spikes"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/twofactor"
	"github.com/tally-analytics/tally/internal/wal"
	"github.com/tally-analytics/tally/internal/web"
)

// App is a wired tally server.
type App struct {
	cfg *config.Config
	log *slog.Logger
	now func() time.Time

	PG    *pgstore.Store
	CH    *chstore.Store
	Redis *redis.Client
	// hot is the Redis client of the per-request commands (rate limits,
	// sessions): it batches the commands of concurrent requests into
	// pipelines.
	hot *redis.AutoPipeliner
	// revocations follows credential revocations from every instance
	revocations *auth.RedisRevocations
	Buffer      *buffer.Buffer
	Auth        *auth.Service
	Accounts    *accounts.Service
	TwoFactor   *twofactor.Service
	Passwords   *passwords.Service
	Ingest      *ingest.Service
	Stats       *stats.Service
	Goals       *goals.Service
	Funnels     *funnels.Service
	Sharing     *sharing.Service
	Segments    *segments.Service
	Reports     *emailreports.Service
	Spikes      *spikes.Service
	Limiter     *ratelimit.Limiter
	Revenue     *revenue.Service
	Deleter     *accounts.Deleter
	API         *httpapi.Server
	Web         *web.Server
	Metrics     *metrics.Metrics

	geo        *geo.DB
	visitor    *ingest.Visitors
	mailerOpts []mailer.Option
	// callers counts the requests being served, for the write-ahead log's
	// group commit (wal.Callers)
	callers wal.Callers
}

// Option adjusts how an App is built (tests inject a clock).
type Option func(*App)

// WithClock replaces time.Now.
func WithClock(now func() time.Time) Option { return func(a *App) { a.now = now } }

// WithMailer adjusts the mailer of the email reports (tests trust their
// own mail server's certificate).
func WithMailer(opts ...mailer.Option) Option {
	return func(a *App) { a.mailerOpts = append(a.mailerOpts, opts...) }
}

// New connects to Postgres (which must answer), prepares ClickHouse and Redis
// connections (which may be down: events wait in the write-ahead log), and
// builds the services.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger, opts ...Option) (*App, error) {
	a := &App{cfg: cfg, log: log, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	if err := a.build(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *App) build(ctx context.Context) (err error) {
	cfg, log := a.cfg, a.log
	a.Metrics = metrics.New()
	box, err := cfg.SecretBox()
	if err != nil {
		return err
	}
	if a.PG, err = pgstore.Open(ctx, cfg.PostgresURL, pgstore.WithSecrets(box)); err != nil {
		return err
	}
	chOpts := CHOptions(cfg)
	chOpts.Observe = a.Metrics.ObserveClickHouse
	if a.CH, err = chstore.New(chOpts); err != nil {
		return err
	}
	if err := a.CH.Ping(ctx); err != nil {
		log.Warn("ClickHouse is not reachable; accepting events into the write-ahead log until it is", "err", err)
	}
	if a.Redis, err = NewRedis(cfg); err != nil {
		return err
	}
	if a.hot, err = a.Redis.AutoPipeline(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	enricher, err := a.newEnricher(ctx)
	if err != nil {
		return err
	}
	sessions := session.NewManager(a.Redis, cfg.RedisPrefix)
	// The revenue service records what the buffer flushes and writes the
	// events of payments into it: the buffer reaches it through this hook.
	var rev lateRevenue
	a.Buffer, err = buffer.Open(buffer.Options{Dir: cfg.WALDir, MaxBytes: cfg.WALMaxBytes, SegmentBytes: cfg.WALSegmentBytes,
		Preallocate: cfg.WALPreallocate, SyncEvery: cfg.WALSyncEvery, Callers: &a.callers,
		FlushRows: cfg.FlushRows, FlushEvery: cfg.FlushInterval, InsertTimeout: cfg.InsertTimeout(),
		DrainTimeout: cfg.DrainTimeout(), Log: log, Observe: a.Metrics.ObserveFlush}, a.CH, sessions, &rev)
	if err != nil {
		return err
	}
	a.Metrics.WatchBuffer(func() metrics.BufferStats {
		st := a.Buffer.Stats()
		return metrics.BufferStats{Written: st.Written, Flushed: st.Flushed, FlushFailures: st.FlushFailures,
			WALBytes: st.WALBytes, Lag: st.Lag}
	})
	a.revocations = auth.NewRedisRevocations(a.Redis, cfg.RedisPrefix, log)
	hasher := auth.NewPasswords(runtime.GOMAXPROCS(0))
	tokens := auth.NewTokens(cfg.JWTSecret, a.now)
	// every server counts an account's wrong codes and passwords, and an
	// address's unknown shared links, in the same place
	attempts := ratelimit.NewAttempts(a.Redis, cfg.RedisPrefix)
	tfOpts := []twofactor.Option{twofactor.WithAttempts(attempts)}
	if cfg.SecretsKeyEphemeral() {
		tfOpts = append(tfOpts, twofactor.WithKeyOfThisProcess())
	}
	// one check of users' passwords, and so one bound on each account's
	// wrong ones, for logins, password changes and turning 2FA on or off
	check := auth.NewPasswordCheck(hasher, attempts, auth.FailedPasswords(cfg.LoginAttempts), a.now, log)
	a.TwoFactor = twofactor.NewService(a.PG, check, a.now, tfOpts...)
	a.Auth = auth.NewService(a.PG, a.revocations, tokens, check, cfg.KeyEnvironment(), a.now, log,
		auth.WithSecondFactor(a.TwoFactor, a.PG))
	a.Passwords = passwords.NewService(a.PG, hasher, check, a.revocations, a.now, log, passwords.WithTokens(tokens),
		passwords.WithSecondFactor(a.TwoFactor), passwords.WithMail(a.resetMail()))
	a.Accounts = accounts.NewService(a.PG, hasher, a.revocations, cfg.KeyEnvironment(), a.now)
	access := accounts.NewAccess(a.PG, a.revocations, a.now, exclusions.Compile, accounts.CountingLookups(a.Metrics.CountSiteLookup))
	a.Deleter = accounts.NewDeleter(a.PG, a.now, log, a.CH, sessions)
	a.Revenue = revenue.NewService(a.PG, a.CH, a.Buffer, a.now, log)
	rev.Service = a.Revenue
	a.Ingest = ingest.NewService(access, enricher, a.Buffer, a.PG, a.Revenue, a.CH, a.now, log, a.Metrics)
	a.Funnels = funnels.NewService(a.PG, a.Accounts)
	a.Segments = segments.NewService(a.PG, a.Accounts)
	a.Stats = stats.NewService(a.CH, a.Accounts, a.PG, a.PG, realtime.NewReader(a.Redis, cfg.RedisPrefix),
		stats.Options{SampleAboveEvents: cfg.SampleAboveEvents, FunnelSampleAboveEvents: cfg.FunnelSampleAboveEvents,
			GroupSampleAboveEvents: cfg.GroupSampleAboveEvents, PageRollups: cfg.PageRollups && cfg.Rollups,
			Rollups: cfg.Rollups, Funnels: a.Funnels, Segments: a.Segments}, a.now, log)
	a.Goals = goals.NewService(a.PG, a.Accounts)
	// a link's password is hashed as an account's; the browsers that gave it
	// keep a signature made with a key derived from the login tokens' secret
	a.Sharing = sharing.NewService(a.PG, a.Accounts, hasher, cfg.JWTSecret, a.now)
	a.Reports = emailreports.NewService(a.PG, a.Accounts, a.Stats, a.mailOptions(), a.now, log)
	a.Spikes = spikes.NewService(a.PG, a.Accounts, a.Stats, a.mailOptions(), a.now, log)
	a.Limiter = ratelimit.New(a.hot, cfg.RedisPrefix)
	a.API = httpapi.New(httpapi.Deps{Auth: a.Auth, Ingest: a.Ingest, Stats: a.Stats, Goals: a.Goals, Revenue: a.Revenue, Funnels: a.Funnels,
		Sites: a.Accounts, SiteLookup: access, SitesAPI: accounts.NewSites(a.Accounts, a.PG, exclusions.Validate), Limiter: a.Limiter, Log: log, MaxEventBody: cfg.MaxEventBodyBytes, MaxBatchBody: cfg.MaxBatchBodyBytes,
		Metrics: a.Metrics, MetricsToken: cfg.MetricsToken, Export: export.NewEvents(a.Stats, a.CH),
		SharedLinks: a.Sharing, Segments: a.Segments, PublicURL: cfg.PublicURL, Passwords: a.Passwords, Now: a.now,
		TrustedProxies: cfg.TrustedProxyNets(), ForceHTTPS: cfg.ForceHTTPS(), Limits: httpapi.Limits{
			EventsPerHour: map[model.Plan]int{model.PlanFree: cfg.FreeEventsPerHour, model.PlanPro: cfg.ProEventsPerHour,
				model.PlanEnterprise: cfg.EnterpriseEventsPerHour},
			StatsPerHour: cfg.StatsPerHour, LoginAttempts: cfg.LoginAttempts, TrackerPerMinute: cfg.TrackerPerMinute,
			ManagePerHour: cfg.ManagePerHour, AuthFailuresPerMinute: cfg.AuthFailuresPerMinute,
			ClientRevenuePerHour: cfg.ClientRevenuePerHour, ExportsPerHour: cfg.ExportsPerHour,
			WebhooksPerHour: cfg.WebhooksPerHour}})
	a.Web, err = web.New(web.Deps{Auth: a.Auth, Sessions: a.PG, Sites: accounts.NewSites(a.Accounts, a.PG, exclusions.Validate),
		Revenue: clientRevenue{a.Revenue, a.Accounts},
		Team:    accounts.NewTeam(a.Accounts, a.PG), Keys: a.Accounts, TwoFactor: a.TwoFactor, Passwords: a.Passwords, Goals: a.Goals, Funnels: a.Funnels, Shares: a.Sharing, Segments: a.Segments, Reports: a.Reports, Spikes: a.Spikes, Stats: a.Stats, Limiter: a.Limiter,
		Log: log, Now: a.now, SecureCookies: cfg.Env != config.EnvDevelopment, HSTS: cfg.ForceHTTPS(), ForceHTTPS: cfg.ForceHTTPS(),
		PublicURL: cfg.PublicURL, TrustedProxies: cfg.TrustedProxyNets(), LoginAttempts: cfg.LoginAttempts,
		StatsPerHour: cfg.StatsPerHour, ManagePerHour: cfg.ManagePerHour, SharePerHour: cfg.SharePerHour,
		ShareMisses: attempts})
	return err
}

// mailOptions are the settings of the sites' mail (email reports, spike
// notifications): a mailer when TALLY_SMTP_URL is set (validated at
// start), else none, and no mail.
func (a *App) mailOptions() emailreports.Options {
	opts := emailreports.Options{From: a.cfg.MailFrom, PublicURL: a.cfg.PublicURL}
	if srv, from, ok := a.cfg.Mail(); ok {
		opts.Sender = mailer.New(srv, from, a.mailerOpts...)
	}
	return opts
}

// resetMail is how reset links of forgotten passwords are sent: by the
// email reports' mail server, when there is one.
func (a *App) resetMail() passwords.Mail {
	m := passwords.Mail{From: a.cfg.MailFrom, PublicURL: a.cfg.PublicURL}
	if srv, from, ok := a.cfg.Mail(); ok {
		m.Sender = mailer.New(srv, from, a.mailerOpts...)
	}
	return m
}

// lateRevenue lets the write buffer record the revenue of events through
// the revenue service, which is built after the buffer (it writes the
// events of payments into it). It is set before the buffer runs.
type lateRevenue struct{ *revenue.Service }

// clientRevenue gives the dashboard the revenue service's purge, with the
// accounts' answer to who may do it.
type clientRevenue struct {
	rev   *revenue.Service
	sites revenue.Sites
}

func (c clientRevenue) PurgeClientRevenue(ctx context.Context, p auth.Principal, site model.SiteID) (int64, error) {
	return c.rev.PurgeClientRevenue(ctx, c.sites, p, site)
}

// CHOptions are the ClickHouse connection options of cfg.
func CHOptions(cfg *config.Config) chstore.Options {
	return chstore.Options{Addr: cfg.ClickHouseAddr, Database: cfg.ClickHouseDatabase, Cluster: cfg.ClickHouseCluster,
		User: cfg.ClickHouseUser, Password: cfg.ClickHousePassword, Timeout: cfg.ClickHouseTimeout,
		Compress: !cfg.ClickHouseOnThisHost()}
}

// NewRedis makes a Redis client for cfg (it connects lazily).
func NewRedis(cfg *config.Config) (*redis.Client, error) {
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, errors.New("invalid TALLY_REDIS_URL")
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	// Fail fast when Redis is down: callers degrade (sessions are skipped,
	// keys are checked in Postgres) rather than hold the request.
	opts.MaxRetries, opts.DialerRetries = 1, 1
	return redis.NewClient(opts), nil
}

func (a *App) newEnricher(ctx context.Context) (*ingest.Enricher, error) {
	ua, err := useragent.New(a.cfg.UACacheSize)
	if err != nil {
		return nil, err
	}
	if a.geo, err = geo.Open(a.cfg.GeoIPPath); err != nil {
		return nil, err
	}
	if a.cfg.GeoIPPath == "" {
		a.log.Warn("TALLY_GEOIP_PATH is not set; countries, regions and cities will be unknown")
	}
	refs, err := referrer.New()
	if err != nil {
		return nil, err
	}
	a.visitor = ingest.NewVisitors(a.PG)
	if err := a.visitor.Prepare(ctx, a.now()); err != nil {
		return nil, err
	}
	return &ingest.Enricher{UA: ua, Geo: a.geo, Referrers: refs, Visitors: a.visitor}, nil
}

// Handler serves the API and, on every other path, the dashboard.
func (a *App) Handler() http.Handler {
	api, dashboard := a.API.Handler(), a.Web.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.callers.Enter()
		defer a.callers.Leave()
		if apiPath(r.URL.Path) {
			api.ServeHTTP(w, r)
			return
		}
		dashboard.ServeHTTP(w, r)
	})
}

// apiPath reports whether a path belongs to the API (and the tracker, its
// pixel included):
// everything else is the dashboard's.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/js/") || p == "/e" || p == "/p.gif" || p == "/health" || p == "/metrics" || p == "/api"
}

// Serve runs the background work and the HTTP server on ln until ctx ends;
// then it stops accepting requests, waits for those in flight, drains the
// write buffer and returns nil.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopBackground()
	a.startBackground(bg, &wg)

	srv := httpapi.HTTPServer(ln.Addr().String(), a.Handler())
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	a.log.Info("tally is serving", "addr", ln.Addr().String(), "env", a.cfg.Env)
	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down: draining requests and the write buffer")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), a.cfg.HTTPStopGrace())
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		a.log.Warn("http shutdown", "err", err)
	}
	stopBackground()
	wg.Wait()
	st := a.Buffer.Stats()
	a.log.Info("stopped", "events_written", st.Written, "events_flushed", st.Flushed, "wal_bytes", st.WALBytes)
	return nil
}

// RunBackground runs the background work until ctx ends (for tests that
// serve the Handler themselves); it returns after the buffer drained.
func (a *App) RunBackground(ctx context.Context) {
	var wg sync.WaitGroup
	a.startBackground(ctx, &wg)
	wg.Wait()
}

func (a *App) startBackground(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() {
		if err := a.Buffer.Run(ctx); err != nil {
			a.log.Error("write buffer stopped", "err", err)
		}
	})
	wg.Go(func() { a.Auth.RunUsageFlusher(ctx, 30*time.Second) })
	wg.Go(func() { a.Limiter.Run(ctx) })
	wg.Go(func() { a.revocations.Run(ctx) })
	wg.Go(func() { a.PG.FollowAccessChanges(ctx, a.revocations.Forget, a.logAccessListening(ctx)) })
	wg.Go(func() { a.prepareSalts(ctx) })
	wg.Go(func() { a.Revenue.RunExporter(ctx) })
	wg.Go(func() { a.Ingest.RunRefusals(ctx, a.cfg.FlushInterval) })
	wg.Go(func() { a.Deleter.Run(ctx, 30*time.Second) })
	wg.Go(func() { a.Reports.Run(ctx) })
	wg.Go(func() { a.Spikes.Run(ctx) })
	wg.Go(func() { a.Passwords.Run(ctx) })
	wg.Go(func() { a.buildBlocks(ctx) })
	if a.cfg.ECBRatesURL != "" {
		wg.Go(func() { a.fetchRates(ctx) })
	}
}

// blockBuildEvery is how often a server builds the visitor blocks that
// closed: a few a week, each soon after its end.
const blockBuildEvery = 10 * time.Minute

// buildBlocks builds the visitor blocks that closed (stats.BlockBuilds) at
// start and then every blockBuildEvery, by ClickHouse's clock. Every server
// does: a block built twice is built once (its states are unions), and a
// block not built yet is read from its days meanwhile, a day from its raw
// rows.
func (a *App) buildBlocks(ctx context.Context) {
	t := time.NewTicker(blockBuildEvery)
	defer t.Stop()
	for {
		n, err := a.CH.BuildClosedBlocks(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			a.log.Warn("visitor blocks: build failed; reports merge those blocks' days until it succeeds", "err", err)
		case n > 0:
			a.log.Info("visitor blocks: built", "blocks", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// logAccessListening logs when this server stops hearing the changes the
// database announces (and when it hears them again), but not when it
// stops listening because ctx ended.
func (a *App) logAccessListening(ctx context.Context) func(bool) {
	heard := false
	return func(listening bool) {
		switch {
		case listening && !heard:
			a.log.Info("following access changes announced by Postgres")
		case !listening && heard && ctx.Err() == nil:
			a.log.Warn("not hearing the access changes Postgres announces; changes made by hand in the database apply within a minute until it is back")
		}
		heard = listening
	}
}

// fetchRates imports the configured ECB file at start and then periodically,
// and converts the payments that waited for those rates.
func (a *App) fetchRates(ctx context.Context) {
	client := revenue.NewRatesClient()
	t := time.NewTicker(a.cfg.ECBFetchInterval)
	defer t.Stop()
	for {
		if n, err := a.importRates(ctx, client); err != nil {
			a.log.Warn("exchange rates: fetch failed; payments in currencies without a rate wait", "err", err)
		} else {
			a.log.Info("exchange rates: imported", "rates", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *App) importRates(ctx context.Context, client *http.Client) (int, error) {
	file, err := revenue.FetchECB(ctx, client, a.cfg.ECBRatesURL)
	if err != nil {
		return 0, err
	}
	if len(file.Skipped) > 0 {
		a.log.Info("rates: skipped currencies tally takes no payments in", "currencies", strings.Join(file.Skipped, ","))
	}
	if err := a.PG.UpsertRates(ctx, file.Rates); err != nil {
		return 0, err
	}
	_, err = a.Revenue.ConvertPending(ctx)
	return len(file.Rates), err
}

// prepareSalts keeps tomorrow's visitor salt ready, hourly.
func (a *App) prepareSalts(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.visitor.Prepare(ctx, a.now()); err != nil {
				a.log.Warn("preparing visitor salts", "err", err)
			}
		}
	}
}

// Close releases every connection and file. Call it after Serve returned.
func (a *App) Close() {
	if a.Buffer != nil {
		a.Buffer.Close()
	}
	if a.geo != nil {
		a.geo.Close()
	}
	if a.hot != nil {
		a.hot.Close()
	}
	if a.Redis != nil {
		a.Redis.Close()
	}
	if a.CH != nil {
		a.CH.Close()
	}
	if a.PG != nil {
		a.PG.Close()
	}
}
