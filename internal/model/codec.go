package model

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"time"
)

// The binary encoding of a Record, the unit of the write-ahead log. Every
// accepted event is encoded once and decoded once on its way to ClickHouse,
// so the encoding is compact and cheap: a version byte, a flags byte, then
// the fields in a fixed order, strings and lists length-prefixed with
// uvarints, numbers as varints.
//
// Changing the layout means a new version byte and keeping the old decoder:
// a log written before an upgrade is replayed after it. Version 1 (and JSON
// before it, first byte '{') carried the session rows computed when the
// event was accepted; version 2 leaves sessions to the write buffer.
const (
	recordV1 byte = 1
	recordV2 byte = 2
)

// Record flags.
const (
	hasEvent byte = 1 << iota
	hasBot
	noSession     // v2
	clientRevenue // v2: the event's revenue came from the tracking script
	hasEngagement // v2: a page's scroll depth, after the bot's fields
	stableVisitor // v2: the event's visitor id is stable (EventRow.StableVisitor); unset before it was recorded
)

// ErrCorruptRecord reports bytes that do not decode as a Record or an Attribution.
var ErrCorruptRecord = errors.New("model: corrupt record")

// AppendRecord appends the binary encoding of r to b. Its session fields
// (Event.SessionID, PrevPathname, TimeOnPrev, Sessions) are not written:
// the write buffer resolves sessions.
func AppendRecord(b []byte, r Record) []byte {
	var flags byte
	if r.Event != nil {
		flags |= hasEvent
	}
	if r.Bot != nil {
		flags |= hasBot
	}
	if r.NoSession {
		flags |= noSession
	}
	if r.ClientRevenue {
		flags |= clientRevenue
	}
	if r.Engagement != nil {
		flags |= hasEngagement
	}
	if r.Event != nil && r.Event.StableVisitor {
		flags |= stableVisitor
	}
	b = append(b, recordV2, flags)
	if e := r.Event; e != nil {
		b = AppendString(b, string(e.SiteID))
		b = AppendTime(b, e.Timestamp)
		b = AppendString(b, e.EventID)
		b = AppendString(b, e.Name)
		b = binary.AppendUvarint(b, e.VisitorID)
		b = AppendString(b, e.Pathname)
		b = AppendAttribution(b, e.Attribution)
		b = AppendStrings(b, e.PropKeys)
		b = AppendStrings(b, e.PropValues)
		b = binary.AppendVarint(b, e.RevenueAmount)
		b = AppendString(b, e.RevenueCurrency)
		b = AppendString(b, r.BaseCurrency)
	}
	if bot := r.Bot; bot != nil {
		b = appendBot(b, bot)
	}
	if g := r.Engagement; g != nil {
		b = appendEngagement(b, g)
	}
	return b
}

// DecodeRecord decodes what AppendRecord wrote, or a record of an earlier
// version (those come back with Resolved set).
func DecodeRecord(p []byte) (Record, error) {
	var r Record
	if len(p) > 0 && p[0] == '{' {
		err := json.Unmarshal(p, &r)
		r.Resolved = true
		return r, err
	}
	if len(p) < 2 || (p[0] != recordV1 && p[0] != recordV2) {
		return r, ErrCorruptRecord
	}
	if p[0] == recordV1 {
		return decodeV1(p)
	}
	d := newRowDecoder(p[2:])
	flags := p[1]
	r.NoSession, r.ClientRevenue = flags&noSession != 0, flags&clientRevenue != 0
	if flags&hasEvent != 0 {
		e := &EventRow{}
		e.SiteID = SiteID(d.ReadString())
		e.Timestamp = d.ReadTime()
		e.EventID, e.Name = d.ReadString(), d.ReadString()
		e.VisitorID, e.StableVisitor = d.ReadUvarint(), flags&stableVisitor != 0
		e.Pathname = d.ReadString()
		e.Attribution = d.ReadAttribution()
		e.PropKeys, e.PropValues = d.ReadStrings(), d.ReadStrings()
		e.RevenueAmount = d.ReadVarint()
		e.RevenueCurrency = d.ReadString()
		r.BaseCurrency = d.ReadString()
		r.Event = e
	}
	if flags&hasBot != 0 {
		r.Bot = d.readBot()
	}
	if flags&hasEngagement != 0 {
		r.Engagement = d.readEngagement()
	}
	if err := d.Done(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// decodeV1 reads a record of version 1: the event with its session fields,
// and the session rows computed on acceptance.
func decodeV1(p []byte) (Record, error) {
	r := Record{Resolved: true}
	d := newRowDecoder(p[2:])
	flags := p[1]
	if flags&hasEvent != 0 {
		e := &EventRow{}
		e.SiteID = SiteID(d.ReadString())
		e.Timestamp = d.ReadTime()
		e.EventID, e.Name = d.ReadString(), d.ReadString()
		e.VisitorID, e.SessionID = d.ReadUvarint(), d.ReadUvarint()
		e.Pathname, e.PrevPathname = d.ReadString(), d.ReadString()
		e.TimeOnPrev = uint32(d.ReadUvarint())
		e.Attribution = d.ReadAttribution()
		e.PropKeys, e.PropValues = d.ReadStrings(), d.ReadStrings()
		e.RevenueAmount = d.ReadVarint()
		e.RevenueCurrency = d.ReadString()
		r.Event = e
	}
	if n := d.ReadCount(); n > 0 {
		r.Sessions = make([]SessionRow, n)
		for i := range r.Sessions {
			s := &r.Sessions[i]
			s.SiteID = SiteID(d.ReadString())
			s.SessionID, s.VisitorID = d.ReadUvarint(), d.ReadUvarint()
			s.Sign = int8(d.ReadVarint())
			s.Version = uint32(d.ReadUvarint())
			s.Start, s.End = d.ReadTime(), d.ReadTime()
			s.Pageviews, s.Events = uint32(d.ReadUvarint()), uint32(d.ReadUvarint())
			s.IsBounce = d.ReadBool()
			s.EntryPage, s.ExitPage = d.ReadString(), d.ReadString()
			s.Attribution = d.ReadAttribution()
		}
	}
	if flags&hasBot != 0 {
		r.Bot = d.readBot()
	}
	if err := d.Done(); err != nil {
		return Record{}, err
	}
	return r, nil
}

func appendBot(b []byte, bot *BotEventRow) []byte {
	b = AppendString(b, string(bot.SiteID))
	b = AppendTime(b, bot.Timestamp)
	b = AppendString(b, bot.EventID)
	return AppendString(b, bot.Reason)
}

func (d *Decoder) readBot() *BotEventRow {
	bot := &BotEventRow{}
	bot.SiteID = SiteID(d.ReadString())
	bot.Timestamp = d.ReadTime()
	bot.EventID, bot.Reason = d.ReadString(), d.ReadString()
	return bot
}

func appendEngagement(b []byte, g *EngagementRow) []byte {
	b = AppendString(b, string(g.SiteID))
	b = AppendTime(b, g.Timestamp)
	b = AppendString(b, g.EventID)
	b = binary.AppendUvarint(b, g.VisitorID)
	b = AppendString(b, g.Pathname)
	return append(b, g.ScrollDepth)
}

func (d *Decoder) readEngagement() *EngagementRow {
	g := &EngagementRow{}
	g.SiteID = SiteID(d.ReadString())
	g.Timestamp = d.ReadTime()
	g.EventID = d.ReadString()
	g.VisitorID = d.ReadUvarint()
	g.Pathname = d.ReadString()
	g.ScrollDepth = d.readPercent()
	return g
}

// AppendAttribution appends the binary encoding of a to b.
func AppendAttribution(b []byte, a Attribution) []byte {
	for _, s := range [...]string{a.Hostname, a.Referrer, a.ReferrerSource, a.SourceType, a.UTMSource, a.UTMMedium,
		a.UTMCampaign, a.UTMContent, a.UTMTerm, a.Device, a.Browser, a.BrowserVersion, a.OS, a.OSVersion,
		a.CountryCode, a.RegionCode, a.RegionName, a.City} {
		b = AppendString(b, s)
	}
	return b
}

// AttributionSize is the length of a's encoding.
func AttributionSize(a *Attribution) int {
	n := 0
	for _, s := range [...]string{a.Hostname, a.Referrer, a.ReferrerSource, a.SourceType, a.UTMSource, a.UTMMedium,
		a.UTMCampaign, a.UTMContent, a.UTMTerm, a.Device, a.Browser, a.BrowserVersion, a.OS, a.OSVersion,
		a.CountryCode, a.RegionCode, a.RegionName, a.City} {
		n += StringSize(s)
	}
	return n
}

// StringSize is the length of AppendString's encoding of s.
func StringSize(s string) int { return UvarintSize(uint64(len(s))) + len(s) }

// UvarintSize is the length of binary.AppendUvarint's encoding of x.
func UvarintSize(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// VarintSize is the length of binary.AppendVarint's encoding of x.
func VarintSize(x int64) int { return UvarintSize(uint64(x<<1) ^ uint64(x>>63)) }

// DecodeAttribution decodes what AppendAttribution wrote.
func DecodeAttribution(p []byte) (Attribution, error) {
	d := Decoder{p: p}
	a := d.ReadAttribution()
	if d.err != nil || len(d.p) != 0 {
		return Attribution{}, ErrCorruptRecord
	}
	return a, nil
}

// AppendString appends s, length-prefixed.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendStrings appends a list of strings, count-prefixed.
func AppendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// AppendTime writes t as Unix seconds and nanoseconds; the zero time
// decodes as the zero time.
func AppendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// AppendBool appends v as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// Decoder reads the fields of an encoding written with this file's Append
// functions, in order; the first problem sticks and every later read
// returns a zero value. Done reports it.
type Decoder struct {
	p   []byte
	err error
	// s, when set, holds the bytes p started with, as one string: strings
	// are read as parts of it, one allocation a record instead of one a
	// string (~25 for an event). They keep the whole of s alive, so it
	// suits records whose fields live and die together, like a row's.
	s string
}

// NewDecoder reads p.
func NewDecoder(p []byte) *Decoder { return &Decoder{p: p} }

// newRowDecoder reads p, its strings parts of one copy of p.
func newRowDecoder(p []byte) Decoder { return Decoder{p: p, s: string(p)} }

// Done reports ErrCorruptRecord when a read failed or bytes are left over.
func (d *Decoder) Done() error {
	if d.err != nil || len(d.p) != 0 {
		return ErrCorruptRecord
	}
	return nil
}

// Err reports ErrCorruptRecord when a read failed.
func (d *Decoder) Err() error { return d.err }

// Rest returns the bytes not read yet, and reads them.
func (d *Decoder) Rest() []byte {
	p := d.p
	d.p = nil
	return p
}

func (d *Decoder) fail() { d.err, d.p = ErrCorruptRecord, nil }

// ReadUvarint reads an unsigned varint.
func (d *Decoder) ReadUvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

// ReadVarint reads a signed varint.
func (d *Decoder) ReadVarint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

// ReadCount reads a length and checks that it can be real: each element takes
// at least one byte.
func (d *Decoder) ReadCount() int {
	n := d.ReadUvarint()
	if n > uint64(len(d.p)) {
		d.fail()
		return 0
	}
	return int(n)
}

// ReadString reads what AppendString wrote.
func (d *Decoder) ReadString() string {
	n := d.ReadCount()
	var s string
	if d.s != "" {
		at := len(d.s) - len(d.p) // p is what is left of the bytes s copies
		s = d.s[at : at+n]
	} else {
		s = string(d.p[:n])
	}
	d.p = d.p[n:]
	return s
}

// ReadStrings reads what AppendStrings wrote.
func (d *Decoder) ReadStrings() []string {
	n := d.ReadCount()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.ReadString()
	}
	return out
}

// ReadBool reads what AppendBool wrote.
func (d *Decoder) ReadBool() bool {
	if len(d.p) == 0 || d.p[0] > 1 {
		d.fail()
		return false
	}
	v := d.p[0] == 1
	d.p = d.p[1:]
	return v
}

// readPercent reads a percentage (0–100) written as one byte.
func (d *Decoder) readPercent() uint8 {
	if len(d.p) == 0 || d.p[0] > 100 {
		d.fail()
		return 0
	}
	v := d.p[0]
	d.p = d.p[1:]
	return v
}

// ReadTime reads what AppendTime wrote.
func (d *Decoder) ReadTime() time.Time {
	if !d.ReadBool() {
		return time.Time{}
	}
	sec := d.ReadVarint()
	nsec := d.ReadUvarint()
	if nsec >= uint64(time.Second) {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// ReadAttribution reads what AppendAttribution wrote.
func (d *Decoder) ReadAttribution() Attribution {
	return Attribution{Hostname: d.ReadString(), Referrer: d.ReadString(), ReferrerSource: d.ReadString(), SourceType: d.ReadString(),
		UTMSource: d.ReadString(), UTMMedium: d.ReadString(), UTMCampaign: d.ReadString(), UTMContent: d.ReadString(),
		UTMTerm: d.ReadString(), Device: d.ReadString(), Browser: d.ReadString(), BrowserVersion: d.ReadString(), OS: d.ReadString(),
		OSVersion: d.ReadString(), CountryCode: d.ReadString(), RegionCode: d.ReadString(), RegionName: d.ReadString(), City: d.ReadString()}
}
