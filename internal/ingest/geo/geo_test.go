package geo_test

import (
	"net/netip"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/geo/geotest"
)

var (
	london = geo.Location{CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"}
	sf     = geo.Location{CountryCode: "US", RegionCode: "US-CA", RegionName: "California", City: "San Francisco"}
	berlin = geo.Location{CountryCode: "DE", RegionCode: "DE-BE", RegionName: "Berlin", City: "Berlin"}
)

func testRecords() map[string]geo.Location {
	return map[string]geo.Location{
		"81.2.69.0/24":       london,
		"81.2.69.128/25":     berlin, // more specific network wins
		"2001:db8::/32":      sf,
		"2a02:8000::/24":     {CountryCode: "DE"},                     // country only
		"89.160.20.0/24":     {CountryCode: "SE", RegionCode: "SE-E"}, // region without name or city
		"216.160.83.0/24":    {CountryCode: "US", City: "Milton"},     // city without region
		"10.0.0.0/8":         sf,                                      // private: must never be answered
		"2001:db8:ffff::/48": {},                                      // record with no fields
	}
}

func TestLookup(t *testing.T) {
	db := geotest.OpenCityDB(t, testRecords())
	tests := []struct {
		name string
		ip   string
		want geo.Location
	}{
		{"ipv4", "81.2.69.1", london},
		{"ipv4 more specific", "81.2.69.200", berlin},
		{"ipv4-mapped ipv6", "::ffff:81.2.69.1", london},
		{"ipv6", "2001:db8::1", sf},
		{"ipv6 with zone", "2001:db8::1%eth0", sf},
		{"country only", "2a02:8000::42", geo.Location{CountryCode: "DE"}},
		{"subdivision without name", "89.160.20.7", geo.Location{CountryCode: "SE", RegionCode: "SE-E"}},
		{"no subdivision", "216.160.83.9", geo.Location{CountryCode: "US", City: "Milton"}},
		{"empty record", "2001:db8:ffff::1", geo.Location{}},
		{"not in database v4", "1.1.1.1", geo.Location{}},
		{"not in database v6", "2606:4700::1111", geo.Location{}},
		{"private v4 even if listed", "10.1.2.3", geo.Location{}},
		{"private v4", "192.168.1.1", geo.Location{}},
		{"unique local v6", "fd00::1", geo.Location{}},
		{"loopback v4", "127.0.0.1", geo.Location{}},
		{"loopback v6", "::1", geo.Location{}},
		{"link-local", "169.254.1.1", geo.Location{}},
		{"unspecified", "0.0.0.0", geo.Location{}},
		{"multicast", "224.0.0.1", geo.Location{}},
		{"invalid", "", geo.Location{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ip netip.Addr // zero Addr for the invalid case
			if tt.ip != "" {
				ip = netip.MustParseAddr(tt.ip)
			}
			for _, from := range []string{"database", "cache"} { // the second answer is the cache's
				if diff := cmp.Diff(tt.want, db.Lookup(ip)); diff != "" {
					t.Errorf("Lookup(%s) from the %s mismatch (-want +got):\n%s", tt.ip, from, diff)
				}
			}
		})
	}
}

func TestLookupWithoutDatabase(t *testing.T) {
	ip := netip.MustParseAddr("81.2.69.1")

	db, err := geo.Open("")
	if err != nil {
		t.Fatalf(`Open("") error: %v`, err)
	}
	if got := db.Lookup(ip); got != (geo.Location{}) {
		t.Errorf(`Open("").Lookup = %+v, want zero Location`, got)
	}
	if err := db.Close(); err != nil {
		t.Errorf(`Open("").Close() = %v`, err)
	}

	var nilDB *geo.DB
	if got := nilDB.Lookup(ip); got != (geo.Location{}) {
		t.Errorf("nil DB Lookup = %+v, want zero Location", got)
	}
	if err := nilDB.Close(); err != nil {
		t.Errorf("nil DB Close() = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := geo.Open(filepath.Join(dir, "missing.mmdb")); err == nil {
		t.Error("Open(missing file) succeeded, want error")
	}
	if _, err := geo.Open(dir); err == nil {
		t.Error("Open(directory) succeeded, want error")
	}
}

func TestLookupAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "city.mmdb")
	geotest.WriteCityDB(t, path, testRecords())
	db, err := geo.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("81.2.69.1")
	if diff := cmp.Diff(london, db.Lookup(ip)); diff != "" {
		t.Fatalf("Lookup before Close mismatch (-want +got):\n%s", diff)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if got := db.Lookup(ip); got != (geo.Location{}) {
		t.Errorf("Lookup after Close = %+v, want zero Location", got)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
}

func TestLookupConcurrent(t *testing.T) {
	db := geotest.OpenCityDB(t, testRecords())
	ips := map[string]geo.Location{"81.2.69.1": london, "2001:db8::1": sf, "1.1.1.1": {}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				for ip, want := range ips {
					if got := db.Lookup(netip.MustParseAddr(ip)); got != want {
						t.Errorf("Lookup(%s) = %+v, want %+v", ip, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkLookup(b *testing.B) {
	db := geotest.OpenCityDB(b, testRecords())
	ip := netip.MustParseAddr("81.2.69.1")
	for b.Loop() {
		db.Lookup(ip)
	}
}
