package wire

import (
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Campaigns is the body of GET /api/v1/stats/campaigns.
func Campaigns(c stats.Campaigns) (res api.CampaignsResponse) {
	list(c.List, &res.Data.Campaigns, &res.Meta, func(r stats.CampaignRow) api.CampaignRow {
		return api.CampaignRow{Value: r.Value, Visitors: r.Visitors, Percentage: r.Percentage, Pageviews: r.Pageviews,
			BounceRate: r.BounceRate}
	})
	res.Data.By = c.By
	return res
}

// Devices is the body of GET /api/v1/stats/devices.
func Devices(l stats.List[stats.Share]) (res api.DevicesResponse) {
	list(l, &res.Data.Devices, &res.Meta, func(s stats.Share) api.DeviceRow {
		return api.DeviceRow{Device: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// Browsers is the body of GET /api/v1/stats/browsers.
func Browsers(l stats.List[stats.Share]) (res api.BrowsersResponse) {
	list(l, &res.Data.Browsers, &res.Meta, func(s stats.Share) api.BrowserRow {
		return api.BrowserRow{Browser: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// OperatingSystems is the body of GET /api/v1/stats/operating-systems.
func OperatingSystems(l stats.List[stats.Share]) (res api.OperatingSystemsResponse) {
	list(l, &res.Data.OperatingSystems, &res.Meta, func(s stats.Share) api.OSRow {
		return api.OSRow{OS: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// Countries is the body of GET /api/v1/stats/countries.
func Countries(l stats.List[stats.Share]) (res api.CountriesResponse) {
	list(l, &res.Data.Countries, &res.Meta, func(s stats.Share) api.CountryRow {
		return api.CountryRow{CountryCode: s.Value, CountryName: s.Name, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// BrowserVersions is the body of GET /api/v1/stats/browser-versions.
func BrowserVersions(l stats.List[stats.Share]) (res api.BrowserVersionsResponse) {
	list(l, &res.Data.BrowserVersions, &res.Meta, func(s stats.Share) api.BrowserVersionRow {
		return api.BrowserVersionRow{BrowserVersion: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// OSVersions is the body of GET /api/v1/stats/os-versions.
func OSVersions(l stats.List[stats.Share]) (res api.OSVersionsResponse) {
	list(l, &res.Data.OSVersions, &res.Meta, func(s stats.Share) api.OSVersionRow {
		return api.OSVersionRow{OSVersion: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// Regions is the body of GET /api/v1/stats/regions.
func Regions(l stats.List[stats.Share]) (res api.RegionsResponse) {
	list(l, &res.Data.Regions, &res.Meta, func(s stats.Share) api.RegionRow {
		return api.RegionRow{RegionCode: s.Value, RegionName: s.Name, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// Cities is the body of GET /api/v1/stats/cities.
func Cities(l stats.List[stats.Share]) (res api.CitiesResponse) {
	list(l, &res.Data.Cities, &res.Meta, func(s stats.Share) api.CityRow {
		return api.CityRow{City: s.Value, Visitors: s.Visitors, Percentage: s.Percentage}
	})
	return res
}

// Journeys is the body of GET /api/v1/stats/journeys.
func Journeys(j stats.Journeys) api.JourneysResponse {
	return api.JourneysResponse{
		Data: api.Journeys{Sessions: j.Sessions, Visitors: j.Visitors, Journeys: each(j.Rows, func(r stats.JourneyRow) api.Journey {
			return api.Journey{Pages: r.Pages, Sessions: r.Sessions, Visitors: r.Visitors, Percentage: r.Percentage}
		})},
		Meta: api.JourneysMeta{StatsMeta: meta(j.Meta), Steps: j.Steps, Start: j.Start, End: j.End},
	}
}
