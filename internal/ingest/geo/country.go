package geo

import (
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// UnknownCountryCode is the code dashboards use for visitors whose country is
// not known (ISO 3166-1 reserves "ZZ" for unknown territory).
const UnknownCountryCode = "ZZ"

// UnknownCountryName is the name CountryName gives unknown codes.
const UnknownCountryName = "Unknown"

var regionNamer = display.English.Regions()

// nameOverrides replaces CLDR names (as bundled in x/text) that are outdated
// or read oddly in a country list, with the names MaxMind's data uses.
var nameOverrides = map[string]string{
	"CD": "DR Congo",        // CLDR: "Congo - Kinshasa"
	"CG": "Congo Republic",  // CLDR: "Congo - Brazzaville"
	"HK": "Hong Kong",       // CLDR: "Hong Kong SAR China"
	"MK": "North Macedonia", // renamed 2019; x/text still says "Macedonia"
	"MM": "Myanmar",         // CLDR: "Myanmar (Burma)"
	"MO": "Macao",           // CLDR: "Macau SAR China"
	"PS": "Palestine",       // CLDR: "Palestinian Territories"
	"SZ": "Eswatini",        // renamed 2018; x/text still says "Swaziland"
}

// CountryName returns the English name of an ISO 3166-1 alpha-2 country code
// ("US" → "United States"), or UnknownCountryName for "ZZ", "" and any code
// that is not a country. Names come from CLDR via x/text, with a few
// overrides. Codes are matched case-insensitively.
func CountryName(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) != 2 || code == UnknownCountryCode {
		return UnknownCountryName
	}
	if name, ok := nameOverrides[code]; ok {
		return name
	}
	region, err := language.ParseRegion(code)
	if err != nil || !region.IsCountry() {
		return UnknownCountryName
	}
	name := regionNamer.Name(region)
	if name == "" {
		return UnknownCountryName
	}
	return name
}
