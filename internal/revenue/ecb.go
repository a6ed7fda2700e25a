package revenue

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// ECBFile is what ParseECB read: the rates, and the currency columns it
// skipped — codes tally does not take payments in (a retired currency such
// as BGN, which the euro replaced) — sorted, for the caller to report.
type ECBFile struct {
	Rates   []model.Rate
	Skipped []string
}

// ParseECB reads the ECB's reference-rate CSV: a header "Date,USD,JPY,...,"
// (often with a trailing comma, sometimes spaces), then one row per day,
// newest first, dates as 2006-01-02 (history file) or "2 January 2006"
// (daily file), and N/A where a currency had no rate. A zip holding such a
// file (how the ECB serves them) is read too. Unknown currency columns are
// skipped and named; a malformed row is an error naming its line.
func ParseECB(data []byte) (ECBFile, error) {
	rates, skipped, err := parseECB(data)
	return ECBFile{Rates: rates, Skipped: skipped}, err
}

func parseECB(data []byte) ([]model.Rate, []string, error) {
	if bytes.HasPrefix(data, []byte("PK")) {
		var err error
		if data, err = unzipCSV(data); err != nil {
			return nil, nil, err
		}
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("ecb: header: %w", err)
	}
	if len(header) < 2 || !strings.EqualFold(strings.TrimSpace(header[0]), "Date") {
		return nil, nil, errors.New(`ecb: the first column must be "Date"`)
	}
	width := len(header) // the cells a row has: the ECB's files end their lines with a comma
	for width > 1 && strings.TrimSpace(header[width-1]) == "" {
		width--
	}
	var rates []model.Rate
	skipped := map[string]bool{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("ecb: line %d: %w", line, err)
		}
		if len(rec) == 0 || strings.TrimSpace(rec[0]) == "" {
			continue
		}
		day, err := parseECBDate(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, nil, fmt.Errorf("ecb: line %d: %w", line, err)
		}
		if len(rec) < width {
			return nil, nil, fmt.Errorf("ecb: line %d: %d cells where the header has %d (a file cut short?)", line, len(rec), width)
		}
		for i := 1; i < len(rec) && i < len(header); i++ {
			cur, val := strings.ToUpper(strings.TrimSpace(header[i])), strings.TrimSpace(rec[i])
			if cur == "" || val == "" || strings.EqualFold(val, "N/A") || cur == "EUR" {
				continue
			}
			if !money.ValidCurrency(cur) {
				skipped[cur] = true
				continue
			}
			if !ecbRate.MatchString(val) || strings.Trim(val, "0.") == "" {
				return nil, nil, fmt.Errorf("ecb: line %d: %s rate %q is not a positive decimal number (at most 14 digits, and 10 decimals)", line, cur, val)
			}
			rates = append(rates, model.Rate{Currency: cur, Day: day, Rate: val})
		}
	}
	return rates, slices.Sorted(maps.Keys(skipped)), nil
}

// ecbRate is a rate as the ECB writes it, and as the ledger's numeric(24,10)
// keeps it exactly: a plain decimal number.
var ecbRate = regexp.MustCompile(`^[0-9]{1,14}(\.[0-9]{1,10})?$`)

func parseECBDate(s string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, "2 January 2006", "02 January 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date", s)
}

func unzipCSV(data []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("ecb: zip: %w", err)
	}
	for _, f := range zr.File {
		if strings.HasSuffix(strings.ToLower(f.Name), ".csv") {
			rc, err := f.Open()
			if err != nil {
				return nil, fmt.Errorf("ecb: zip: %w", err)
			}
			defer rc.Close()
			return readAtMost(rc, maxRatesFile, "the zip's .csv file")
		}
	}
	return nil, errors.New("ecb: the zip holds no .csv file")
}

// FetchECB downloads a rates file (CSV or zip) from url.
func FetchECB(ctx context.Context, client *http.Client, url string) (ECBFile, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ECBFile{}, fmt.Errorf("ecb: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return ECBFile{}, fmt.Errorf("ecb: fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ECBFile{}, fmt.Errorf("ecb: fetch: status %d", resp.StatusCode)
	}
	data, err := readAtMost(resp.Body, maxRatesFile, "the answer")
	if err != nil {
		return ECBFile{}, fmt.Errorf("ecb: fetch: %w", err)
	}
	return ParseECB(data)
}

// maxRatesFile bounds a rates file, compressed or not: the ECB's whole
// history since 1999 is about 2 MiB of CSV.
const maxRatesFile = 16 << 20

// readAtMost reads r to its end, or fails once it holds more than n bytes
// (a zip that expands without bound, an endless answer).
func readAtMost(r io.Reader, n int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > n {
		return nil, fmt.Errorf("ecb: %s is larger than %d MiB; not a rates file", what, n>>20)
	}
	return data, nil
}

// NewRatesClient is the HTTP client rates are fetched with: 30 s a fetch,
// and a redirect only to https on the same host (a rates URL must not lead
// the server elsewhere, inside the network least of all).
func NewRatesClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("ecb: more than 5 redirects")
		}
		if req.URL.Scheme != "https" || req.URL.Hostname() != via[0].URL.Hostname() {
			return fmt.Errorf("ecb: redirect off %s or off https refused", via[0].URL.Hostname())
		}
		return nil
	}}
}
