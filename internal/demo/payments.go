package demo

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue"
)

// The demo site sells through all four payment providers: Pro monthly
// (provider_a, Stripe), a self-hosted licence with a year of updates
// (provider_b, Lemon Squeezy), Business monthly (provider_c, Paddle), a
// supporter tier (provider_d, Polar), and a one-time data import
// (provider_a's one-time checkout). Prices are per currency; the customer
// pays their country's tax on top.
type product struct {
	name     string
	provider model.Provider
	months   int              // between charges; 0 = one-time
	prices   map[string]int64 // before tax, in minor units
	// weights among new purchases and among subscribers from before the span
	weight, existing float64
}

func (p *product) billing() string {
	switch p.months {
	case 0:
		return "one-time"
	case 1:
		return "monthly"
	}
	return "yearly"
}

func prices(usd, eur, gbp, jpy, cad, aud int64) map[string]int64 {
	return map[string]int64{"USD": usd, "EUR": eur, "GBP": gbp, "JPY": jpy, "CAD": cad, "AUD": aud}
}

var productList = []*product{
	{"pro", model.ProviderA, 1, prices(1900, 1900, 1600, 2900, 2500, 2900), 45, 50},
	{"self-hosted", model.ProviderB, 12, prices(29900, 27900, 23900, 44000, 39900, 44900), 17, 13},
	{"business", model.ProviderC, 1, prices(4900, 4500, 3900, 7200, 6500, 7400), 10, 12},
	{"supporter", model.ProviderD, 1, prices(500, 500, 400, 800, 700, 800), 20, 25},
	{"data-import", model.ProviderA, 0, prices(9900, 9500, 7900, 15000, 13500, 14900), 8, 0},
}

var products, subscriptions = func() (chooser[*product], chooser[*product]) {
	var buy, subs []weighted[*product]
	for _, p := range productList {
		buy = append(buy, weighted[*product]{p, p.weight})
		if p.existing > 0 {
			subs = append(subs, weighted[*product]{p, p.existing})
		}
	}
	return choose(buy...), choose(subs...)
}()

// currencyOf is the currency a country's customers pay in.
func currencyOf(country string) string {
	switch country {
	case "DE", "FR", "NL", "ES", "IT", "AT", "IE", "BE", "FI", "PT":
		return "EUR"
	case "GB":
		return "GBP"
	case "JP":
		return "JPY"
	case "CA":
		return "CAD"
	case "AU":
		return "AUD"
	}
	return "USD"
}

// taxRates are the sales taxes the providers add, by country.
var taxRates = map[string]float64{"DE": 0.19, "FR": 0.20, "NL": 0.21, "ES": 0.21, "IT": 0.22, "SE": 0.25, "PL": 0.23,
	"GB": 0.20, "JP": 0.10, "AU": 0.10, "CA": 0.05, "IN": 0.18}

// amount is what a customer in country pays for p, tax included, less a discount.
func (p *product) amount(country string, discount float64) (int64, string) {
	cur := currencyOf(country)
	a := float64(p.prices[cur]) * (1 - discount) * (1 + taxRates[country])
	return int64(math.Round(a)), cur
}

// Shares of payments.
const (
	withVisitorID  = 0.93 // checkouts that pass the visitor id through metadata
	refundedNew    = 0.07 // first payments refunded within days
	refundedRenew  = 0.03 // renewals refunded (the customer forgot to cancel)
	partialRefund  = 0.3  // of provider_a's refunds, the share of half refunds
	failedRenewal  = 0.10 // provider_c renewals whose first attempt fails
	silentCustomer = 0.2  // per subscriber who visits, the chance of one who never does
)

// charge is one movement of money as a provider's webhook reports it.
type charge struct {
	provider  model.Provider
	kind      model.PaymentKind
	txn, ref  string
	refundOf  string
	sub, cart string // subscription and checkout ids
	amount    int64
	currency  string
	at        time.Time
	vid       string // the visitor id from checkout metadata ("" when not passed)
	// cumulative: amount is the total refunded so far (provider_b's refunds)
	cumulative bool
	renewal    bool
}

// incoming is the charge as the revenue service receives it from the
// provider's webhook.
func (c charge) incoming(site model.Site) revenue.Incoming {
	return revenue.Incoming{Site: site, Provider: string(c.provider), TransactionID: c.txn, Kind: c.kind, Amount: c.amount,
		Currency: c.currency, OccurredAt: c.at, PaymentRef: c.ref, RefundOf: c.refundOf, CumulativeRefund: c.cumulative,
		ClientVisitorID: c.vid, CheckoutSession: c.cart, SubscriptionID: c.sub}
}

// plan collects the payments of a load: each chain is a payment with what
// follows it (a failed attempt before it, its refund).
type plan struct {
	r          *rand.Rand // payment details, apart from the traffic's
	start, end time.Time
	chains     [][]charge
	silent     []string // visitor ids of subscribers who never visit
}

func newPlan(opts Options, start time.Time) *plan {
	return &plan{r: rand.New(rand.NewPCG(opts.Seed^0x5bd1e995, opts.Seed+1)), start: start, end: opts.End}
}

// purchase plans v's payment for p at the end of a checkout from src, and
// what follows: renewals within the span, maybe a refund.
func (pl *plan) purchase(v *visitor, p *product, src *source, at time.Time) {
	amount, cur := p.amount(v.place.country, src.discount)
	c := charge{provider: p.provider, kind: model.KindPayment, amount: amount, currency: cur,
		at: at.Add(time.Duration(5+pl.r.IntN(55)) * time.Second)}
	if chance(pl.r, withVisitorID) {
		c.vid = v.vid
	}
	pl.firstIDs(&c, p)
	pl.add(c, refundedNew, 10)
	full, _ := p.amount(v.place.country, 0) // the discount was for the first payment
	pl.renewals(c, p, c.at, c.vid, full)
}

// existing plans the renewals of a subscriber from before the span, and
// maybe of one who never visits.
func (pl *plan) existing(v *visitor) {
	pl.subscriber(v.vid, v.place.country)
	if chance(pl.r, silentCustomer) {
		vid := clientID(pl.r)
		pl.silent = append(pl.silent, vid)
		pl.subscriber(vid, places.pick(pl.r).country)
	}
}

// subscriber plans the renewals within the span of a subscription taken
// before it.
func (pl *plan) subscriber(vid, country string) {
	p := subscriptions.pick(pl.r)
	amount, cur := p.amount(country, 0)
	first := charge{provider: p.provider, currency: cur}
	pl.firstIDs(&first, p)
	if chance(pl.r, 0.9) {
		first.vid = vid
	}
	period := time.Duration(p.months) * 30 * 24 * time.Hour
	pl.renewals(first, p, pl.start.Add(-time.Duration(pl.r.Int64N(int64(period)))), first.vid, amount)
}

// renewals plans the renewals of a subscription whose first payment was
// at from, while they fall within the span.
func (pl *plan) renewals(first charge, p *product, from time.Time, vid string, amount int64) {
	if p.months == 0 {
		return
	}
	for k := 1; ; k++ {
		at := from.AddDate(0, p.months*k, 0)
		if !at.Before(pl.end) {
			return
		}
		if at.Before(pl.start) {
			continue
		}
		c := charge{provider: p.provider, kind: model.KindPayment, sub: first.sub, amount: amount,
			currency: first.currency, at: at, vid: vid, renewal: true}
		pl.renewalIDs(&c)
		if c.provider == model.ProviderC && chance(pl.r, failedRenewal) {
			failed := c
			failed.kind = model.KindFailed
			pl.chains = append(pl.chains, []charge{failed})
			c.at = c.at.Add(time.Duration(24+pl.r.IntN(48)) * time.Hour) // paid on a retry
			if !c.at.Before(pl.end) {
				continue
			}
		}
		pl.add(c, refundedRenew, 3)
	}
}

// add plans a payment, refunded with probability p within days.
func (pl *plan) add(c charge, p float64, days int) {
	chain := []charge{c}
	if chance(pl.r, p) {
		at := c.at.Add(time.Duration(1+pl.r.IntN(days*24)) * time.Hour)
		if at.Before(pl.end) {
			chain = append(chain, pl.refund(c, at))
		}
	}
	pl.chains = append(pl.chains, chain)
}

// firstIDs gives a first payment the ids its provider uses.
func (pl *plan) firstIDs(c *charge, p *product) {
	r := pl.r
	switch c.provider {
	case model.ProviderA: // checkout.session.completed (one-time), invoice.paid (subscriptions)
		c.ref = "pi_" + token(r, base62, 24)
		c.txn = c.ref
		if p.months > 0 {
			c.txn, c.sub = "in_"+token(r, base62, 24), "sub_"+token(r, base62, 24)
		} else {
			c.cart = "cs_live_" + token(r, base62, 58)
		}
	case model.ProviderB: // order_created
		c.txn = strconv.Itoa(1_000_000 + r.IntN(9_000_000))
		c.ref, c.sub = c.txn, strconv.Itoa(100_000+r.IntN(900_000))
	case model.ProviderC: // transaction.completed of a checkout
		c.txn = "txn_" + token(r, lowerAlnum, 26)
		c.ref, c.cart, c.sub = c.txn, c.txn, "sub_"+token(r, lowerAlnum, 26)
	case model.ProviderD: // order.paid
		c.txn, c.cart = newUUID(r), newUUID(r)
		c.ref = c.txn
		if p.months > 0 {
			c.sub = newUUID(r)
		}
	}
}

// renewalIDs gives a renewal the ids its provider uses.
func (pl *plan) renewalIDs(c *charge) {
	r := pl.r
	switch c.provider {
	case model.ProviderA: // invoice.paid
		c.txn, c.ref = "in_"+token(r, base62, 24), "pi_"+token(r, base62, 24)
	case model.ProviderB: // subscription_payment_success
		c.txn = "subscription-invoice:" + strconv.Itoa(1_000_000+r.IntN(9_000_000))
		c.ref = c.txn
	case model.ProviderC: // transaction.completed of the subscription
		c.txn = "txn_" + token(r, lowerAlnum, 26)
		c.ref = c.txn
	case model.ProviderD: // order.paid
		c.txn = newUUID(r)
		c.ref = c.txn
	}
}

// refund is the refund of c at at, as its provider reports it.
func (pl *plan) refund(c charge, at time.Time) charge {
	rf := charge{provider: c.provider, kind: model.KindRefund, refundOf: c.ref, amount: c.amount, currency: c.currency,
		at: at, renewal: c.renewal}
	r := pl.r
	switch c.provider {
	case model.ProviderA: // charge.refunded, with the refund
		rf.txn = "re_" + token(r, base62, 24)
		if chance(r, partialRefund) {
			rf.amount = c.amount / 2
		}
	case model.ProviderB: // order_refunded: the running total
		rf.txn, rf.cumulative = c.ref+":"+strconv.FormatInt(c.amount, 10), true
	case model.ProviderC: // adjustment.created, action refund
		rf.txn, rf.sub = "adj_"+token(r, lowerAlnum, 26), c.sub
	case model.ProviderD: // refund.created
		rf.txn, rf.sub = newUUID(r), c.sub
	}
	return rf
}
