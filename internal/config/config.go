// Package config loads tally's configuration from the environment once, fills
// defaults, validates it, and prints it with secrets redacted.
package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/tally-analytics/tally/internal/secretbox"
)

// Environments. A production server accepts only sk_live_ keys, any other only
// sk_test_ keys.
const (
	EnvProduction  = "production"
	EnvDevelopment = "development"
	EnvTest        = "test"
)

// identifier is what ClickHouse accepts unquoted as the name of a cluster
// or a database: tally formats both into statements (CREATE DATABASE, ON
// CLUSTER, db.table), where no value can be bound. chstore checks the same.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Config is every setting of tally. Each field documents its variable.
type Config struct {
	// Env is production, development or test (TALLY_ENV). Unset is
	// production: a server that was not told otherwise runs safely.
	Env string `env:"TALLY_ENV" envDefault:"production"`
	// HTTPAddr is the API's listen address (TALLY_HTTP_ADDR).
	HTTPAddr string `env:"TALLY_HTTP_ADDR" envDefault:":8080"`
	// PostgresURL is the Postgres connection URL (TALLY_POSTGRES_URL).
	PostgresURL string `env:"TALLY_POSTGRES_URL" envDefault:"postgres://postgres@127.0.0.1:15432/tally?sslmode=disable" secret:"url"`
	// ClickHouseAddr is host:port of ClickHouse's native protocol
	// (TALLY_CLICKHOUSE_ADDR); on a cluster, a comma-separated list of nodes,
	// tried in order (the first that answers serves every query).
	ClickHouseAddr string `env:"TALLY_CLICKHOUSE_ADDR" envDefault:"127.0.0.1:19000"`
	// ClickHouseCluster names the ClickHouse cluster (remote_servers) to
	// scale out on (TALLY_CLICKHOUSE_CLUSTER): tables become Replicated, with
	// Distributed tables over them sharded by visitor. Empty: one node.
	ClickHouseCluster string `env:"TALLY_CLICKHOUSE_CLUSTER"`
	// ClickHouseDatabase is the ClickHouse database (TALLY_CLICKHOUSE_DATABASE):
	// letters, digits and _, not starting with a digit.
	ClickHouseDatabase string `env:"TALLY_CLICKHOUSE_DATABASE" envDefault:"tally"`
	// ClickHouseUser and ClickHousePassword authenticate to ClickHouse.
	ClickHouseUser     string `env:"TALLY_CLICKHOUSE_USER" envDefault:"default"`
	ClickHousePassword string `env:"TALLY_CLICKHOUSE_PASSWORD" secret:"true"`
	// ClickHouseTimeout bounds every ClickHouse call (TALLY_CLICKHOUSE_TIMEOUT).
	ClickHouseTimeout time.Duration `env:"TALLY_CLICKHOUSE_TIMEOUT" envDefault:"30s"`
	// RedisURL is the Redis connection URL (TALLY_REDIS_URL).
	RedisURL string `env:"TALLY_REDIS_URL" envDefault:"redis://127.0.0.1:16379/0" secret:"url"`
	// RedisPrefix is prepended to every Redis key (TALLY_REDIS_PREFIX).
	RedisPrefix string `env:"TALLY_REDIS_PREFIX" envDefault:"tally:"`
	// JWTSecret signs login tokens (HS256); required in production (TALLY_JWT_SECRET).
	JWTSecret string `env:"TALLY_JWT_SECRET" secret:"true"`
	// SecretsKey seals the payment providers' webhook signing secrets in
	// Postgres (AES-256-GCM; 32 bytes in base64); required in production
	// (TALLY_SECRETS_KEY). SecretsOldKeys are earlier keys, comma-separated,
	// still read during a rotation (TALLY_SECRETS_OLD_KEYS).
	SecretsKey     string `env:"TALLY_SECRETS_KEY" secret:"true"`
	SecretsOldKeys string `env:"TALLY_SECRETS_OLD_KEYS" secret:"true"`
	// secretsKeyMadeUp: SecretsKey was made up for this process.
	secretsKeyMadeUp bool
	// GeoIPPath is a GeoIP2/GeoLite2 City database; empty = no geo (TALLY_GEOIP_PATH).
	GeoIPPath string `env:"TALLY_GEOIP_PATH"`
	// WALDir holds the write-ahead log of accepted events (TALLY_WAL_DIR).
	WALDir string `env:"TALLY_WAL_DIR" envDefault:".data/wal"`
	// WALMaxBytes is the WAL's disk budget; past it ingestion answers 503 (TALLY_WAL_MAX_BYTES).
	WALMaxBytes int64 `env:"TALLY_WAL_MAX_BYTES" envDefault:"2147483648"`
	// WALSegmentBytes is the size at which a WAL segment file is rotated (TALLY_WAL_SEGMENT_BYTES).
	WALSegmentBytes int64 `env:"TALLY_WAL_SEGMENT_BYTES" envDefault:"67108864"`
	// WALPreallocate writes each WAL segment whole (zeros) before it is
	// used, so that a commit's fsync flushes data only and does not wait
	// for the file system's metadata (TALLY_WAL_PREALLOCATE).
	WALPreallocate bool `env:"TALLY_WAL_PREALLOCATE" envDefault:"true"`
	// WALSyncEvery is the least time between two WAL commits: requests
	// arriving meanwhile share the next fsync (TALLY_WAL_SYNC_EVERY; 0 =
	// commit at once).
	WALSyncEvery time.Duration `env:"TALLY_WAL_SYNC_EVERY" envDefault:"2ms"`
	// FlushRows and FlushInterval: a batch goes to ClickHouse when it holds this
	// many events or is this old (TALLY_FLUSH_ROWS, TALLY_FLUSH_INTERVAL). Each
	// flush leaves a part in the events and sessions tables and in each rollup
	// table, which ClickHouse then merges: under single-event load a flush every
	// 2 s halves ClickHouse's CPU an event against one every second.
	FlushRows     int           `env:"TALLY_FLUSH_ROWS" envDefault:"20000"`
	FlushInterval time.Duration `env:"TALLY_FLUSH_INTERVAL" envDefault:"2s"`
	// ShutdownTimeout bounds the whole stop on SIGTERM: requests in flight
	// finish, then the write buffer drains; the process exits within it
	// (TALLY_SHUTDOWN_TIMEOUT). Give the process manager a longer grace
	// period (docker-compose.yml: stop_grace_period).
	ShutdownTimeout time.Duration `env:"TALLY_SHUTDOWN_TIMEOUT" envDefault:"30s"`
	// MaxEventBodyBytes limits an event request body (TALLY_MAX_EVENT_BODY_BYTES).
	MaxEventBodyBytes int64 `env:"TALLY_MAX_EVENT_BODY_BYTES" envDefault:"65536"`
	// MaxBatchBodyBytes limits a POST /api/v1/events/batch body (TALLY_MAX_BATCH_BODY_BYTES).
	MaxBatchBodyBytes int64 `env:"TALLY_MAX_BATCH_BODY_BYTES" envDefault:"4194304"`
	// MetricsToken, when set, is the bearer token GET /metrics requires;
	// unset, /metrics answers loopback clients only (TALLY_METRICS_TOKEN).
	MetricsToken string `env:"TALLY_METRICS_TOKEN" secret:"true"`
	// PublicURL is the server's address as sites and payment providers
	// reach it (https://analytics.example.com), for the dashboard's install
	// snippet and webhook URLs; empty = the address of each request
	// (TALLY_PUBLIC_URL).
	PublicURL string `env:"TALLY_PUBLIC_URL"`
	// SMTPURL is the mail server the email reports go through
	// (TALLY_SMTP_URL): smtp://user:password@host:587 with STARTTLS, or
	// smtps://user:password@host:465 with TLS from the start; empty = no
	// email reports. Its password is a secret.
	SMTPURL string `env:"TALLY_SMTP_URL" secret:"url"`
	// MailFrom is the From of the email reports, "tally <reports@example.com>"
	// or a bare address (TALLY_MAIL_FROM); required with SMTPURL.
	MailFrom string `env:"TALLY_MAIL_FROM"`
	// PprofAddr, when set, serves Go's profiling endpoints (/debug/pprof/)
	// on this address; keep it on loopback (TALLY_PPROF_ADDR, e.g. 127.0.0.1:6060).
	PprofAddr string `env:"TALLY_PPROF_ADDR"`
	// SampleAboveEvents: a stats query whose range holds more events than
	// this runs on a sample of visitors, scaled back; 0 = never sample
	// (TALLY_SAMPLE_ABOVE_EVENTS).
	SampleAboveEvents int64 `env:"TALLY_SAMPLE_ABOVE_EVENTS" envDefault:"20000000"`
	// FunnelSampleAboveEvents: a report no rollup holds (the funnel,
	// browser and OS versions) whose range holds more events than this (or
	// than SampleAboveEvents, when lower) runs on a sample of visitors; 0 =
	// as the other reports (TALLY_FUNNEL_SAMPLE_ABOVE_EVENTS).
	FunnelSampleAboveEvents int64 `env:"TALLY_FUNNEL_SAMPLE_ABOVE_EVENTS" envDefault:"4000000"`
	// GroupSampleAboveEvents: a report that groups raw rows by visitor or
	// session (journeys, retention, the pages' scroll depths) whose range
	// holds more events than this (or than either threshold above, when
	// lower) runs on a sample of visitors; 0 = as the funnel
	// (TALLY_GROUP_SAMPLE_ABOVE_EVENTS).
	GroupSampleAboveEvents int64 `env:"TALLY_GROUP_SAMPLE_ABOVE_EVENTS" envDefault:"300000"`
	// PageRollups lets the pages reports of unfiltered ranges read the daily
	// per-page rollups instead of every event; false reads events only
	// (TALLY_PAGE_ROLLUPS).
	PageRollups bool `env:"TALLY_PAGE_ROLLUPS" envDefault:"true"`
	// Rollups lets every report read the rollups that hold its queries
	// (clickhouse/0008_rollups.sql) for the whole quarters or days of a
	// range, and the raw rows only for its edges; false reads raw rows
	// only, the page rollups included (TALLY_ROLLUPS).
	Rollups bool `env:"TALLY_ROLLUPS" envDefault:"true"`
	// RedirectHTTPS sends plain-HTTP requests to HTTPS (308): "auto" (on in
	// production), "true" or "false". A request counts as HTTPS when it
	// arrived over TLS, or with X-Forwarded-Proto: https from a trusted proxy
	// (TALLY_REDIRECT_HTTPS).
	RedirectHTTPS string `env:"TALLY_REDIRECT_HTTPS" envDefault:"auto"`
	// TrustedProxies are CIDRs of reverse proxies whose X-Forwarded-For is
	// believed for the client address, and whose X-Forwarded-Proto for the
	// scheme (the redirect to HTTPS, and the URLs shown without
	// TALLY_PUBLIC_URL); empty = use the connection's address and scheme
	// (TALLY_TRUSTED_PROXIES, comma-separated).
	TrustedProxies []string `env:"TALLY_TRUSTED_PROXIES" envSeparator:","`
	// Events API limits per API key (or login) and rolling hour, by the
	// owner's plan; an enterprise account's own limit overrides its default
	// (TALLY_FREE_EVENTS_PER_HOUR, TALLY_PRO_EVENTS_PER_HOUR, TALLY_ENTERPRISE_EVENTS_PER_HOUR).
	FreeEventsPerHour       int `env:"TALLY_FREE_EVENTS_PER_HOUR" envDefault:"1000"`
	ProEventsPerHour        int `env:"TALLY_PRO_EVENTS_PER_HOUR" envDefault:"10000"`
	EnterpriseEventsPerHour int `env:"TALLY_ENTERPRISE_EVENTS_PER_HOUR" envDefault:"100000"`
	// StatsPerHour limits stats requests per API key (or login) and rolling
	// hour (TALLY_STATS_PER_HOUR).
	StatsPerHour int `env:"TALLY_STATS_PER_HOUR" envDefault:"3600"`
	// LoginAttempts limits login attempts per email and client address in
	// 15 minutes, against password guessing, and the tries of shared links'
	// passwords per address (httpapi.SharePasswordLimits); an account's
	// wrong passwords, from any address, are bounded to three times as many
	// in 5 minutes (auth.FailedPasswords) (TALLY_LOGIN_ATTEMPTS).
	LoginAttempts int `env:"TALLY_LOGIN_ATTEMPTS" envDefault:"10"`
	// ManagePerHour limits management calls — sites, goals, credential
	// checks, the dashboard's forms — per API key (or login) and rolling
	// hour (TALLY_MANAGE_PER_HOUR).
	ManagePerHour int `env:"TALLY_MANAGE_PER_HOUR" envDefault:"1000"`
	// ExportsPerHour limits raw event exports per account (its API keys and
	// logins together) and rolling hour (TALLY_EXPORTS_PER_HOUR).
	ExportsPerHour int `env:"TALLY_EXPORTS_PER_HOUR" envDefault:"10"`
	// SharePerHour limits the report cards loaded through one shared link
	// per rolling hour, whoever opens it; not counted against the site
	// owner's stats allowance (TALLY_SHARE_PER_HOUR).
	SharePerHour int `env:"TALLY_SHARE_PER_HOUR" envDefault:"2000"`
	// AuthFailuresPerMinute limits failed authentications — unknown or bad
	// credentials, webhooks with bad signatures (those per site too) — per
	// client address; past it the address is answered 429 before any store
	// is asked (TALLY_AUTH_FAILURES_PER_MINUTE).
	AuthFailuresPerMinute int `env:"TALLY_AUTH_FAILURES_PER_MINUTE" envDefault:"30"`
	// TrackerPerMinute limits tracking-script events per client address and
	// minute (TALLY_TRACKER_PER_MINUTE).
	TrackerPerMinute int `env:"TALLY_TRACKER_PER_MINUTE" envDefault:"600"`
	// ClientRevenuePerHour limits the tracking-script events that carry
	// revenue, per site and rolling hour (TALLY_CLIENT_REVENUE_PER_HOUR).
	ClientRevenuePerHour int `env:"TALLY_CLIENT_REVENUE_PER_HOUR" envDefault:"100"`
	// WebhooksPerHour limits the signed payment-provider deliveries a site
	// takes per rolling hour (its secret is its owner's, so signed is not
	// bounded otherwise); past it they are answered 429, which providers
	// retry (TALLY_WEBHOOKS_PER_HOUR).
	WebhooksPerHour int `env:"TALLY_WEBHOOKS_PER_HOUR" envDefault:"10000"`
	// ECBRatesURL, when set, is fetched at start and every ECBFetchInterval
	// for exchange rates (the ECB's daily or history file, CSV or zip)
	// (TALLY_ECB_RATES_URL, TALLY_ECB_FETCH_INTERVAL).
	ECBRatesURL      string        `env:"TALLY_ECB_RATES_URL"`
	ECBFetchInterval time.Duration `env:"TALLY_ECB_FETCH_INTERVAL" envDefault:"6h"`
	// UACacheSize is the number of parsed user agents kept in memory (TALLY_UA_CACHE_SIZE).
	UACacheSize int `env:"TALLY_UA_CACHE_SIZE" envDefault:"30000"`
	// LogLevel is debug, info, warn or error; LogFormat is text or json.
	LogLevel  string `env:"TALLY_LOG_LEVEL" envDefault:"info"`
	LogFormat string `env:"TALLY_LOG_FORMAT" envDefault:"text"`
}

// Load reads the configuration from the environment and validates it. The
// returned warnings are meant for the log (e.g. a development JWT secret).
func Load() (*Config, []string, error) {
	var c Config
	if err := env.Parse(&c); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	warnings, err := c.validate()
	if err != nil {
		return nil, nil, err
	}
	return &c, warnings, nil
}

// The stop on SIGTERM fits in ShutdownTimeout: the HTTP server gets
// HTTPStopGrace to finish requests in flight, then the write buffer starts
// steps for DrainTimeout, and a step under way runs to InsertTimeout (an
// insert is never cut short by the stop itself).
const maxHTTPStopGrace, maxInsertTimeout = 5 * time.Second, 10 * time.Second

// HTTPStopGrace is how long requests in flight get to finish on SIGTERM.
func (c *Config) HTTPStopGrace() time.Duration { return min(maxHTTPStopGrace, c.ShutdownTimeout/3) }

// InsertTimeout bounds each ClickHouse insert of the write buffer.
func (c *Config) InsertTimeout() time.Duration { return min(maxInsertTimeout, c.ShutdownTimeout/3) }

// DrainTimeout is how long the write buffer keeps starting steps after the
// HTTP server stopped.
func (c *Config) DrainTimeout() time.Duration {
	return c.ShutdownTimeout - c.HTTPStopGrace() - c.InsertTimeout()
}

// SlogLevel is the log level of LogLevel (validated by Load).
func (c *Config) SlogLevel() (slog.Level, error) {
	var level slog.Level
	err := level.UnmarshalText([]byte(c.LogLevel))
	return level, err
}

// LogJSON reports whether logs are written as JSON (LogFormat json).
func (c *Config) LogJSON() bool { return strings.EqualFold(c.LogFormat, "json") }

// Production reports whether the server runs in production mode.
func (c *Config) Production() bool { return c.Env == EnvProduction }

// ForceHTTPS reports whether plain-HTTP requests are redirected to HTTPS.
func (c *Config) ForceHTTPS() bool {
	return c.RedirectHTTPS == "true" || (c.RedirectHTTPS == "auto" && c.Production())
}

// TrustedProxyNets parses TrustedProxies (validated by Load).
func (c *Config) TrustedProxyNets() []*net.IPNet {
	var out []*net.IPNet
	for _, cidr := range c.TrustedProxies {
		if _, n, err := net.ParseCIDR(strings.TrimSpace(cidr)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// KeyEnvironment is the API-key environment this server accepts: "live" in
// production, "test" elsewhere.
func (c *Config) KeyEnvironment() string {
	if c.Production() {
		return "live"
	}
	return "test"
}

// SecretsKeyEphemeral reports that no TALLY_SECRETS_KEY was set and this
// process seals with a key of its own.
func (c *Config) SecretsKeyEphemeral() bool { return c.secretsKeyMadeUp }

// SecretBox is the box that seals the providers' webhook secrets, from
// TALLY_SECRETS_KEY and TALLY_SECRETS_OLD_KEYS (validated by Load).
func (c *Config) SecretBox() (*secretbox.Box, error) {
	current, err := secretbox.ParseKey(c.SecretsKey)
	if err != nil {
		return nil, fmt.Errorf("TALLY_SECRETS_KEY: %w", err)
	}
	var old [][]byte
	for _, s := range strings.Split(c.SecretsOldKeys, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := secretbox.ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("TALLY_SECRETS_OLD_KEYS: %w", err)
		}
		old = append(old, k)
	}
	return secretbox.New(current, old...)
}

func (c *Config) validate() ([]string, error) {
	var warnings []string
	var problems []error
	switch {
	case c.SecretsKey == "" && c.Production():
		problems = append(problems, errors.New("TALLY_SECRETS_KEY is required: 32 bytes in base64, e.g. "+
			"head -c 32 /dev/urandom | base64 (for a local server, set TALLY_ENV=development instead)"))
	case c.SecretsKey == "":
		// no fixed key anywhere: a local server seals with one of its own
		k := make([]byte, secretbox.KeySize)
		rand.Read(k)
		c.SecretsKey, c.secretsKeyMadeUp = base64.StdEncoding.EncodeToString(k), true
		warnings = append(warnings, "TALLY_SECRETS_KEY is not set; webhook secrets saved now are sealed with a key of "+
			"this process and cannot be read after it stops, and two-factor authentication cannot be turned on (TALLY_ENV="+c.Env+")")
		fallthrough
	default:
		if _, err := c.SecretBox(); err != nil {
			problems = append(problems, err)
		}
	}
	switch c.Env {
	case EnvProduction, EnvDevelopment, EnvTest:
	default:
		problems = append(problems, fmt.Errorf("TALLY_ENV must be production, development or test, not %q", c.Env))
	}
	switch {
	case c.JWTSecret == "" && c.Production():
		problems = append(problems, errors.New("TALLY_JWT_SECRET is required (at least 32 characters; "+
			"for a local server, set TALLY_ENV=development instead)"))
	case c.JWTSecret == "":
		// no fixed secret anywhere: a local server signs with one of its own
		c.JWTSecret = rand.Text() + rand.Text()
		warnings = append(warnings, "TALLY_JWT_SECRET is not set; login tokens are signed with a secret of this process "+
			"and end when it stops (TALLY_ENV="+c.Env+")")
	case len(c.JWTSecret) < 32:
		problems = append(problems, errors.New("TALLY_JWT_SECRET must be at least 32 characters"))
	}
	if c.FlushRows <= 0 {
		problems = append(problems, errors.New("TALLY_FLUSH_ROWS must be positive"))
	}
	if c.FlushInterval <= 0 {
		problems = append(problems, errors.New("TALLY_FLUSH_INTERVAL must be positive"))
	}
	if c.MaxEventBodyBytes < 1024 {
		problems = append(problems, errors.New("TALLY_MAX_EVENT_BODY_BYTES must be at least 1024"))
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, errors.New("TALLY_PUBLIC_URL must be an http(s) URL such as https://analytics.example.com"))
		}
	}
	problems = append(problems, c.validateMail(&warnings)...)
	if c.MaxBatchBodyBytes < c.MaxEventBodyBytes {
		problems = append(problems, errors.New("TALLY_MAX_BATCH_BODY_BYTES must be at least TALLY_MAX_EVENT_BODY_BYTES"))
	}
	if c.WALDir == "" {
		problems = append(problems, errors.New("TALLY_WAL_DIR must not be empty"))
	}
	if c.ShutdownTimeout < 3*time.Second {
		problems = append(problems, errors.New("TALLY_SHUTDOWN_TIMEOUT must be at least 3s"))
	}
	if c.WALSegmentBytes < 1<<20 {
		problems = append(problems, errors.New("TALLY_WAL_SEGMENT_BYTES must be at least 1 MiB"))
	}
	if c.WALSyncEvery < 0 || c.WALSyncEvery > 100*time.Millisecond {
		problems = append(problems, errors.New("TALLY_WAL_SYNC_EVERY must be between 0 and 100ms"))
	}
	if c.WALMaxBytes != 0 && c.WALMaxBytes < 2*c.WALSegmentBytes {
		problems = append(problems, errors.New("TALLY_WAL_MAX_BYTES must be 0 (unlimited) or at least two segments"))
	}
	switch c.RedirectHTTPS {
	case "auto", "true", "false":
	default:
		problems = append(problems, errors.New("TALLY_REDIRECT_HTTPS must be auto, true or false"))
	}
	for _, cidr := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(strings.TrimSpace(cidr)); err != nil {
			problems = append(problems, fmt.Errorf("TALLY_TRUSTED_PROXIES: %q is not a CIDR such as 10.0.0.0/8", cidr))
		}
	}
	if c.ECBRatesURL != "" {
		if u, err := url.Parse(c.ECBRatesURL); err != nil || u.Host == "" ||
			(u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
			problems = append(problems, errors.New("TALLY_ECB_RATES_URL must be an https URL (http only to this host: localhost, 127.0.0.1, ::1)"))
		}
	}
	if c.ECBFetchInterval < time.Minute {
		problems = append(problems, errors.New("TALLY_ECB_FETCH_INTERVAL must be at least 1m"))
	}
	for name, v := range map[string]int{"TALLY_FREE_EVENTS_PER_HOUR": c.FreeEventsPerHour, "TALLY_PRO_EVENTS_PER_HOUR": c.ProEventsPerHour,
		"TALLY_ENTERPRISE_EVENTS_PER_HOUR": c.EnterpriseEventsPerHour, "TALLY_STATS_PER_HOUR": c.StatsPerHour,
		"TALLY_LOGIN_ATTEMPTS": c.LoginAttempts, "TALLY_MANAGE_PER_HOUR": c.ManagePerHour, "TALLY_EXPORTS_PER_HOUR": c.ExportsPerHour,
		"TALLY_SHARE_PER_HOUR":           c.SharePerHour,
		"TALLY_AUTH_FAILURES_PER_MINUTE": c.AuthFailuresPerMinute, "TALLY_CLIENT_REVENUE_PER_HOUR": c.ClientRevenuePerHour,
		"TALLY_WEBHOOKS_PER_HOUR": c.WebhooksPerHour} {
		if v <= 0 {
			problems = append(problems, fmt.Errorf("%s must be positive", name))
		}
	}
	if c.UACacheSize <= 0 {
		problems = append(problems, errors.New("TALLY_UA_CACHE_SIZE must be positive"))
	}
	if c.TrackerPerMinute <= 0 {
		problems = append(problems, errors.New("TALLY_TRACKER_PER_MINUTE must be positive"))
	}
	if c.SampleAboveEvents < 0 {
		problems = append(problems, errors.New("TALLY_SAMPLE_ABOVE_EVENTS must be 0 or positive"))
	}
	if c.FunnelSampleAboveEvents < 0 {
		problems = append(problems, errors.New("TALLY_FUNNEL_SAMPLE_ABOVE_EVENTS must be 0 or positive"))
	}
	if c.GroupSampleAboveEvents < 0 {
		problems = append(problems, errors.New("TALLY_GROUP_SAMPLE_ABOVE_EVENTS must be 0 or positive"))
	}
	if addrs := ClickHouseAddrs(c.ClickHouseAddr); len(addrs) == 0 {
		problems = append(problems, errors.New("TALLY_CLICKHOUSE_ADDR must name a node as host:port, e.g. clickhouse:9000"))
	} else {
		for _, a := range addrs {
			if _, port, err := net.SplitHostPort(a); err != nil || !validPort(port) {
				problems = append(problems, fmt.Errorf("TALLY_CLICKHOUSE_ADDR: %q is not a host:port such as clickhouse:9000", a))
			}
		}
	}
	if !identifier.MatchString(c.ClickHouseDatabase) {
		problems = append(problems, fmt.Errorf("TALLY_CLICKHOUSE_DATABASE must be a ClickHouse identifier (letters, digits, _, "+
			"not starting with a digit, at most 63), not %q", c.ClickHouseDatabase))
	}
	if c.ClickHouseCluster != "" && !identifier.MatchString(c.ClickHouseCluster) {
		problems = append(problems, errors.New("TALLY_CLICKHOUSE_CLUSTER must be a ClickHouse identifier (letters, digits, _)"))
	}
	if c.ClickHouseTimeout <= 0 {
		problems = append(problems, errors.New("TALLY_CLICKHOUSE_TIMEOUT must be positive"))
	}
	if _, err := c.SlogLevel(); err != nil {
		problems = append(problems, fmt.Errorf("TALLY_LOG_LEVEL must be debug, info, warn or error, not %q", c.LogLevel))
	}
	if !c.LogJSON() && !strings.EqualFold(c.LogFormat, "text") {
		problems = append(problems, fmt.Errorf("TALLY_LOG_FORMAT must be text or json, not %q", c.LogFormat))
	}
	return warnings, errors.Join(problems...)
}

// String prints every setting with secrets redacted, one per line.
func (c *Config) String() string {
	var b strings.Builder
	v := reflect.ValueOf(*c)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // state of this process, no variable
		}
		val := fmt.Sprint(v.Field(i).Interface())
		switch f.Tag.Get("secret") {
		case "true":
			if val != "" {
				val = "[redacted]"
			}
		case "url":
			val = RedactURL(val)
		}
		fmt.Fprintf(&b, "%s=%s\n", f.Tag.Get("env"), val)
	}
	return b.String()
}

// RedactURL hides the password of a connection URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparseable]"
	}
	return u.Redacted()
}

// ClickHouseOnThisHost reports whether every node of ClickHouseAddr is on
// this machine (loopback). Compressing the traffic to such a server only
// spends CPU on both sides: LZ4 was 1.6 % of tally's CPU under single-event
// ingest, all of it on the flusher's inserts.
func (c *Config) ClickHouseOnThisHost() bool {
	for _, a := range ClickHouseAddrs(c.ClickHouseAddr) {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			host = a
		}
		if !loopback(host) {
			return false
		}
	}
	return true
}

// ClickHouseAddrs are the nodes of a TALLY_CLICKHOUSE_ADDR list
// ("host:port, host:port"): its entries, trimmed, the empty ones left out.
func ClickHouseAddrs(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// validPort reports whether port is a TCP port number (1-65535).
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
