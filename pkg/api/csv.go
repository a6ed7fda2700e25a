package api

// A report answered as CSV (format=csv) has one row per item of one list of
// its JSON answer, and one column per JSON field of the item. CSVRows names
// that list; each report names it here and nowhere else.

// CSVRows is the overview's daily time series (date, visitors, pageviews);
// the headline metrics and the comparison are in the JSON answer only.
func (r OverviewResponse) CSVRows() any { return r.Data.Timeseries }

// CSVRows is the page of the pages report.
func (r PagesResponse) CSVRows() any { return r.Data.Pages }

// CSVRows is the page of the hostnames report.
func (r HostnamesResponse) CSVRows() any { return r.Data.Hostnames }

// CSVRows is the list of sources.
func (r SourcesResponse) CSVRows() any { return r.Data.Sources }

// CSVRows is the list of channels.
func (r ChannelsResponse) CSVRows() any { return r.Data.Channels }

// CSVRows is the list of values of the UTM parameter.
func (r CampaignsResponse) CSVRows() any { return r.Data.Campaigns }

// CSVRows is the list of entry pages.
func (r EntryPagesResponse) CSVRows() any { return r.Data.EntryPages }

// CSVRows is the list of exit pages.
func (r ExitPagesResponse) CSVRows() any { return r.Data.ExitPages }

// CSVRows is the list of devices.
func (r DevicesResponse) CSVRows() any { return r.Data.Devices }

// CSVRows is the list of browsers.
func (r BrowsersResponse) CSVRows() any { return r.Data.Browsers }

// CSVRows is the list of versions of the browser.
func (r BrowserVersionsResponse) CSVRows() any { return r.Data.BrowserVersions }

// CSVRows is the list of versions of the operating system.
func (r OSVersionsResponse) CSVRows() any { return r.Data.OSVersions }

// CSVRows is the list of operating systems.
func (r OperatingSystemsResponse) CSVRows() any { return r.Data.OperatingSystems }

// CSVRows is the list of countries.
func (r CountriesResponse) CSVRows() any { return r.Data.Countries }

// CSVRows is the list of regions.
func (r RegionsResponse) CSVRows() any { return r.Data.Regions }

// CSVRows is the list of cities.
func (r CitiesResponse) CSVRows() any { return r.Data.Cities }

// CSVRows is the list of custom events.
func (r EventsResponse) CSVRows() any { return r.Data.Events }

// CSVRows is the list of the event's prop keys.
func (r EventPropertyKeysResponse) CSVRows() any { return r.Data }

// CSVRows is the list of the property's values.
func (r EventPropertyValuesResponse) CSVRows() any { return r.Data }

// CSVRows is the list of current pages; active_visitors and current_sources
// are in the JSON answer only.
func (r RealtimeResponse) CSVRows() any { return r.Data.CurrentPages }

// CSVRows is the list of goals' conversions.
func (r ConversionsResponse) CSVRows() any { return r.Data }

// CSVRows is the breakdown when one was asked for, else the daily series;
// each row ends with the currency of its amounts (data.currency), which a
// file of minor units cannot do without. The totals are in the JSON answer
// only.
func (r RevenueResponse) CSVRows() any {
	cur := r.Data.Currency
	if r.Meta.Breakdown != "" {
		rows := make([]revenueRowCSV, len(r.Data.Breakdown))
		for i, row := range r.Data.Breakdown {
			rows[i] = revenueRowCSV{row, cur}
		}
		return rows
	}
	rows := make([]revenuePointCSV, len(r.Data.Timeseries))
	for i, pt := range r.Data.Timeseries {
		rows[i] = revenuePointCSV{pt, cur}
	}
	return rows
}

type revenueRowCSV struct {
	RevenueRow
	Currency string `json:"currency"`
}

type revenuePointCSV struct {
	RevenuePoint
	Currency string `json:"currency"`
}

// CSVRows is the retention report's table a cell a row (RetentionCell):
// each cohort's periods in order, the cohort's date and visitors on each.
func (r RetentionResponse) CSVRows() any {
	cells := []RetentionCell{}
	for _, c := range r.Data.Cohorts {
		for _, p := range c.Periods {
			cells = append(cells, RetentionCell{Cohort: c.Date, CohortVisitors: c.Visitors, Period: p.Period,
				Visitors: p.Visitors, Percentage: p.Percentage})
		}
	}
	return cells
}
