package export

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Format is the file format of a raw export.
type Format string

// The formats of a raw export.
const (
	// NDJSON is one JSON object per line (api.ExportedEvent), LF line ends:
	// the default.
	NDJSON Format = "ndjson"
	// CSV is a header row of the JSON field names and one row per record,
	// as the reports' CSV: props is one column holding a JSON object.
	CSV Format = "csv"
)

// NDJSONType is the media type of an NDJSON export.
const NDJSONType = "application/x-ndjson"

// ParseFormat reads the format parameter of an export.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case NDJSON, CSV:
		return f, nil
	}
	return "", errs.InvalidField("format", "must be ndjson or csv")
}

// ContentType is the media type of an answer in the format.
func (f Format) ContentType() string {
	if f == CSV {
		return ContentType
	}
	return NDJSONType
}

// EventsFileName is the file name of an export of r's site and dates:
// events-<site_id>-<date_from>-<date_to>.ndjson (or .csv).
func EventsFileName(r stats.Request, f Format) string {
	return fileName("events", r) + "." + string(f)
}

// EventEncoder writes the records of an export in a format, buffered.
type EventEncoder interface {
	Encode(e *api.ExportedEvent) error
	// Flush writes what is buffered to the underlying writer, and flushes
	// that too when it has a Flush() error method (compression, a network
	// answer).
	Flush() error
}

// bufferSize is the buffer between an export and its writer.
const bufferSize = 64 << 10

// NewEventEncoder writes records in format f to w. A CSV export's header
// row is written first (buffered), so that even an empty export has one.
func NewEventEncoder(f Format, w io.Writer) (EventEncoder, error) {
	bw := bufio.NewWriterSize(w, bufferSize)
	switch f {
	case NDJSON:
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		return &ndjsonEncoder{bw: bw, enc: enc, under: w}, nil
	case CSV:
		cw, err := NewCSVWriter(bw, reflect.TypeFor[api.ExportedEvent]())
		if err != nil {
			return nil, err
		}
		return &csvEncoder{bw: bw, cw: cw, under: w}, nil
	}
	return nil, fmt.Errorf("export: unknown format %q", f)
}

type ndjsonEncoder struct {
	bw    *bufio.Writer
	enc   *json.Encoder
	under io.Writer
}

func (e *ndjsonEncoder) Encode(r *api.ExportedEvent) error { return e.enc.Encode(r) }
func (e *ndjsonEncoder) Flush() error                      { return flush(e.bw, e.under) }

type csvEncoder struct {
	bw    *bufio.Writer
	cw    *CSVWriter
	under io.Writer
}

func (e *csvEncoder) Encode(r *api.ExportedEvent) error { return e.cw.Write(r) }

func (e *csvEncoder) Flush() error {
	if err := e.cw.Flush(); err != nil {
		return err
	}
	return flush(e.bw, e.under)
}

func flush(bw *bufio.Writer, under io.Writer) error {
	if err := bw.Flush(); err != nil {
		return err
	}
	if f, ok := under.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// noProps is the props of events without any: {} rather than null.
var noProps = map[string]string{}

// fill makes e the record of row. Strings are shared with row, which the
// store fills anew for the next event: e is encoded before that.
func fill(e *api.ExportedEvent, row *model.EventRow) {
	a := &row.Attribution
	*e = api.ExportedEvent{
		EventID: row.EventID, Timestamp: row.Timestamp.UTC().Truncate(time.Second), Name: row.Name,
		Pathname: row.Pathname, Hostname: a.Hostname, Referrer: a.Referrer,
		Source: a.ReferrerSource, SourceType: a.SourceType,
		UTMSource: a.UTMSource, UTMMedium: a.UTMMedium, UTMCampaign: a.UTMCampaign, UTMContent: a.UTMContent,
		UTMTerm: a.UTMTerm, Device: a.Device, Browser: a.Browser, BrowserVersion: a.BrowserVersion,
		OS: a.OS, OSVersion: a.OSVersion, Country: a.CountryCode, Region: a.RegionCode, RegionName: a.RegionName,
		City: a.City, Props: noProps, SessionID: opaqueID(row.SessionID), VisitorID: opaqueID(row.VisitorID),
	}
	if n := min(len(row.PropKeys), len(row.PropValues)); n > 0 {
		e.Props = make(map[string]string, n)
		for i := range n {
			e.Props[row.PropKeys[i]] = row.PropValues[i]
		}
	}
	if row.RevenueAmount != 0 {
		amount, currency := row.RevenueAmount, row.RevenueCurrency
		e.RevenueAmount, e.RevenueCurrency = &amount, &currency
	}
}

// opaqueID writes a session or visitor id as 16 hexadecimal digits. The
// ids are hashes already (a visitor's of the site and the id the tracker or
// an Events API sender gave, or of a daily salt, the address and the user
// agent, the salt deleted within two days; a session's of its first
// event's id): equal ids tell the same visitor or session, and no address
// or user agent can be read from them.
func opaqueID(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return hex.EncodeToString(b[:])
}
