package model

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// The binary encoding of a Record, the unit of the write-ahead log. Every
// accepted event is encoded once and decoded once on its way to ClickHouse,
// so the encoding is compact and cheap: a version byte, then the fields in a
// fixed order, strings and lists length-prefixed with uvarints, numbers as
// varints. Records written by older versions as JSON (first byte '{') still
// decode.
//
// Changing the layout means a new version byte and keeping the old decoder:
// a log written before an upgrade is replayed after it.
const recordV1 byte = 1

// Record flags (v1).
const (
	hasEvent byte = 1 << iota
	hasBot
)

// ErrCorruptRecord reports bytes that do not decode as a Record or an Attribution.
var ErrCorruptRecord = errors.New("model: corrupt record")

// AppendRecord appends the binary encoding of r to b.
func AppendRecord(b []byte, r Record) []byte {
	var flags byte
	if r.Event != nil {
		flags |= hasEvent
	}
	if r.Bot != nil {
		flags |= hasBot
	}
	b = append(b, recordV1, flags)
	if e := r.Event; e != nil {
		b = appendString(b, string(e.SiteID))
		b = appendTime(b, e.Timestamp)
		b = appendString(b, e.EventID)
		b = appendString(b, e.Name)
		b = binary.AppendUvarint(b, e.VisitorID)
		b = binary.AppendUvarint(b, e.SessionID)
		b = appendString(b, e.Pathname)
		b = appendString(b, e.PrevPathname)
		b = binary.AppendUvarint(b, uint64(e.TimeOnPrev))
		b = AppendAttribution(b, e.Attribution)
		b = appendStrings(b, e.PropKeys)
		b = appendStrings(b, e.PropValues)
		b = binary.AppendVarint(b, e.RevenueAmount)
		b = appendString(b, e.RevenueCurrency)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Sessions)))
	for _, s := range r.Sessions {
		b = appendString(b, string(s.SiteID))
		b = binary.AppendUvarint(b, s.SessionID)
		b = binary.AppendUvarint(b, s.VisitorID)
		b = binary.AppendVarint(b, int64(s.Sign))
		b = binary.AppendUvarint(b, uint64(s.Version))
		b = appendTime(b, s.Start)
		b = appendTime(b, s.End)
		b = binary.AppendUvarint(b, uint64(s.Pageviews))
		b = binary.AppendUvarint(b, uint64(s.Events))
		b = appendBool(b, s.IsBounce)
		b = appendString(b, s.EntryPage)
		b = appendString(b, s.ExitPage)
		b = AppendAttribution(b, s.Attribution)
	}
	if bot := r.Bot; bot != nil {
		b = appendString(b, string(bot.SiteID))
		b = appendTime(b, bot.Timestamp)
		b = appendString(b, bot.EventID)
		b = appendString(b, bot.Reason)
	}
	return b
}

// DecodeRecord decodes what AppendRecord wrote (or a JSON record).
func DecodeRecord(p []byte) (Record, error) {
	var r Record
	if len(p) > 0 && p[0] == '{' {
		err := json.Unmarshal(p, &r)
		return r, err
	}
	if len(p) < 2 || p[0] != recordV1 {
		return r, ErrCorruptRecord
	}
	d := decoder{p: p[2:]}
	flags := p[1]
	if flags&hasEvent != 0 {
		e := &EventRow{}
		e.SiteID = SiteID(d.string())
		e.Timestamp = d.time()
		e.EventID, e.Name = d.string(), d.string()
		e.VisitorID, e.SessionID = d.uvarint(), d.uvarint()
		e.Pathname, e.PrevPathname = d.string(), d.string()
		e.TimeOnPrev = uint32(d.uvarint())
		e.Attribution = d.attribution()
		e.PropKeys, e.PropValues = d.strings(), d.strings()
		e.RevenueAmount = d.varint()
		e.RevenueCurrency = d.string()
		r.Event = e
	}
	if n := d.count(); n > 0 {
		r.Sessions = make([]SessionRow, n)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			s.SiteID = SiteID(d.string())
			s.SessionID, s.VisitorID = d.uvarint(), d.uvarint()
			s.Sign = int8(d.varint())
			s.Version = uint32(d.uvarint())
			s.Start, s.End = d.time(), d.time()
			s.Pageviews, s.Events = uint32(d.uvarint()), uint32(d.uvarint())
			s.IsBounce = d.bool()
			s.EntryPage, s.ExitPage = d.string(), d.string()
			s.Attribution = d.attribution()
		}
	}
	if flags&hasBot != 0 {
		bot := &BotEventRow{}
		bot.SiteID = SiteID(d.string())
		bot.Timestamp = d.time()
		bot.EventID, bot.Reason = d.string(), d.string()
		r.Bot = bot
	}
	if d.err != nil || len(d.p) != 0 {
		return Record{}, ErrCorruptRecord
	}
	return r, nil
}

// AppendAttribution appends the binary encoding of a to b.
func AppendAttribution(b []byte, a Attribution) []byte {
	for _, s := range [...]string{a.Hostname, a.Referrer, a.ReferrerSource, a.SourceType, a.UTMSource, a.UTMMedium,
		a.UTMCampaign, a.UTMContent, a.UTMTerm, a.Device, a.Browser, a.BrowserVersion, a.OS, a.OSVersion,
		a.CountryCode, a.RegionCode, a.RegionName, a.City} {
		b = appendString(b, s)
	}
	return b
}

// DecodeAttribution decodes what AppendAttribution wrote.
func DecodeAttribution(p []byte) (Attribution, error) {
	d := decoder{p: p}
	a := d.attribution()
	if d.err != nil || len(d.p) != 0 {
		return Attribution{}, ErrCorruptRecord
	}
	return a, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// appendTime writes t as Unix seconds and nanoseconds; the zero time
// decodes as the zero time.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decoder reads the fields of an encoding in order; the first problem sticks
// in err and every later read returns a zero value.
type decoder struct {
	p   []byte
	err error
}

func (d *decoder) fail() { d.err, d.p = ErrCorruptRecord, nil }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

// count reads a length and checks that it can be real: each element takes
// at least one byte.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.count()
	s := string(d.p[:n])
	d.p = d.p[n:]
	return s
}

func (d *decoder) strings() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

func (d *decoder) bool() bool {
	if len(d.p) == 0 || d.p[0] > 1 {
		d.fail()
		return false
	}
	v := d.p[0] == 1
	d.p = d.p[1:]
	return v
}

func (d *decoder) time() time.Time {
	if !d.bool() {
		return time.Time{}
	}
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= uint64(time.Second) {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func (d *decoder) attribution() Attribution {
	return Attribution{Hostname: d.string(), Referrer: d.string(), ReferrerSource: d.string(), SourceType: d.string(),
		UTMSource: d.string(), UTMMedium: d.string(), UTMCampaign: d.string(), UTMContent: d.string(),
		UTMTerm: d.string(), Device: d.string(), Browser: d.string(), BrowserVersion: d.string(), OS: d.string(),
		OSVersion: d.string(), CountryCode: d.string(), RegionCode: d.string(), RegionName: d.string(), City: d.string()}
}
