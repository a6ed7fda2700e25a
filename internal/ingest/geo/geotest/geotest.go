// Package geotest writes tiny GeoIP2-City databases for tests, so code that
// needs geolocation can be tested against a real mmdb file without MaxMind's
// data.
//
//	path := filepath.Join(t.TempDir(), "city.mmdb")
//	geotest.WriteCityDB(t, path, map[string]geo.Location{
//		"81.2.69.0/24": {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
//		"2001:db8::/32": {CountryCode: "US"},
//	})
//	db, err := geo.Open(path)
//
// or, when the test only needs the open DB:
//
//	db := geotest.OpenCityDB(t, records)
package geotest

import (
	"cmp"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/tally-analytics/tally/internal/ingest/geo"
)

// WriteCityDB writes an mmdb file at path in the GeoIP2-City layout holding
// one record per network. Keys are CIDR prefixes, IPv4 or IPv6; values use
// geo.Location, so a lookup through geo.DB returns the same Location. A
// RegionCode is written as its subdivision part (the text after the dash);
// empty fields are left out of the record, as MaxMind does. Reserved ranges
// (private, documentation) are allowed, so tests can use 192.0.2.0/24 or
// 2001:db8::/32. Any failure stops the test.
func WriteCityDB(t testing.TB, path string, records map[string]geo.Location) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            "GeoIP2-City",
		Description:             map[string]string{"en": "tally test database"},
		Languages:               []string{"en"},
		IPVersion:               6,
		RecordSize:              24,
		IncludeReservedNetworks: true,
	})
	if err != nil {
		t.Fatalf("geotest: new tree: %v", err)
	}
	for _, n := range sortedNetworks(t, records) {
		if err := tree.Insert(n.network, cityRecord(records[n.key])); err != nil {
			t.Fatalf("geotest: insert %s: %v", n.key, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("geotest: %v", err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		f.Close()
		t.Fatalf("geotest: write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("geotest: close %s: %v", path, err)
	}
}

type keyedNetwork struct {
	key     string
	network *net.IPNet
}

// sortedNetworks parses the keys and orders them widest first: inserting a
// network replaces whatever lies inside it, so narrower networks go in last
// and win, whatever the map's iteration order.
func sortedNetworks(t testing.TB, records map[string]geo.Location) []keyedNetwork {
	t.Helper()
	networks := make([]keyedNetwork, 0, len(records))
	for key := range records {
		prefix, err := netip.ParsePrefix(key)
		if err != nil {
			t.Fatalf("geotest: network %q: %v", key, err)
		}
		prefix = prefix.Masked()
		networks = append(networks, keyedNetwork{key: key, network: &net.IPNet{
			IP:   prefix.Addr().AsSlice(),
			Mask: net.CIDRMask(prefix.Bits(), prefix.Addr().BitLen()),
		}})
	}
	slices.SortFunc(networks, func(a, b keyedNetwork) int {
		aBits, _ := a.network.Mask.Size()
		bBits, _ := b.network.Mask.Size()
		return cmp.Or(cmp.Compare(aBits, bBits), strings.Compare(a.key, b.key))
	})
	return networks
}

// OpenCityDB writes records to a database in t.TempDir, opens it, and closes
// it when the test ends: the one call most tests need.
func OpenCityDB(t testing.TB, records map[string]geo.Location) *geo.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "GeoIP2-City-Test.mmdb")
	WriteCityDB(t, path, records)
	db, err := geo.Open(path)
	if err != nil {
		t.Fatalf("geotest: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("geotest: %v", err)
		}
	})
	return db
}

func cityRecord(loc geo.Location) mmdbtype.Map {
	rec := mmdbtype.Map{}
	if loc.CountryCode != "" {
		country := mmdbtype.Map{"iso_code": mmdbtype.String(loc.CountryCode)}
		if name := countryName(loc.CountryCode); name != "" {
			country["names"] = names(name)
		}
		rec["country"] = country
	}
	if loc.RegionCode != "" || loc.RegionName != "" {
		sub := mmdbtype.Map{}
		if code := subdivisionCode(loc.RegionCode); code != "" {
			sub["iso_code"] = mmdbtype.String(code)
		}
		if loc.RegionName != "" {
			sub["names"] = names(loc.RegionName)
		}
		rec["subdivisions"] = mmdbtype.Slice{sub}
	}
	if loc.City != "" {
		rec["city"] = mmdbtype.Map{"names": names(loc.City)}
	}
	return rec
}

func names(en string) mmdbtype.Map {
	return mmdbtype.Map{"en": mmdbtype.String(en)}
}

// subdivisionCode turns "US-CA" into "CA"; a code without a dash is taken as
// the subdivision part already.
func subdivisionCode(regionCode string) string {
	if _, after, ok := strings.Cut(regionCode, "-"); ok {
		return after
	}
	return regionCode
}

// countryName fills country.names.en the way MaxMind does; geo.DB does not
// read it, but the record then looks like the real thing.
func countryName(code string) string {
	if name := geo.CountryName(code); name != geo.UnknownCountryName {
		return name
	}
	return ""
}
