package httpapi

import (
	"context"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/revenue"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/wire"
	"github.com/tally-analytics/tally/pkg/api"
)

// Revenue records payments.
type Revenue interface {
	RecordAPI(ctx context.Context, sites revenue.Sites, p auth.Principal, in revenue.PaymentInput) (revenue.Recorded, error)
	Webhook(ctx context.Context, sites revenue.SiteLookup, provider string, site model.SiteID, h http.Header, body []byte,
		spend revenue.Allowance) (revenue.WebhookResult, error)
	PurgeClientRevenue(ctx context.Context, sites revenue.Sites, p auth.Principal, site model.SiteID) (int64, error)
}

// maxWebhookBody bounds a provider notification (they are a few KiB).
const maxWebhookBody = 1 << 20

func (s *Server) revenueRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	// a payment counts against the account's Events API allowance
	g.POST("/stats/payments", s.payment, append(mw, s.limitEvents, bodyLimit(64<<10))...)
	g.GET("/stats/revenue", report(stats.Endpoint{Revenue: true}, s.deps.Stats.Revenue, wire.Revenue), s.reads(append(mw, s.limitStats)...)...)
	g.POST("/webhooks/:provider", s.webhook, bodyLimit(maxWebhookBody))
	g.DELETE("/sites/:id/client-revenue", s.purgeClientRevenue, append(mw, s.limitManage)...)
}

// purgeClientRevenue deletes the revenue the tracking script reported to a site.
func (s *Server) purgeClientRevenue(c echo.Context) error {
	id := model.SiteID(c.Param("id"))
	n, err := s.deps.Revenue.PurgeClientRevenue(c.Request().Context(), s.deps.Sites, principal(c), id)
	if err != nil {
		return err
	}
	var res api.ClientRevenuePurge
	res.Data.SiteID, res.Data.Purged = string(id), n
	return c.JSON(http.StatusOK, res)
}

func (s *Server) payment(c echo.Context) error {
	var req api.PaymentRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	rec, err := s.deps.Revenue.RecordAPI(c.Request().Context(), s.deps.Sites, principal(c), revenue.PaymentInput{
		SiteID: req.SiteID, Amount: req.Amount.String(), Currency: req.Currency, VisitorID: req.VisitorID,
		Timestamp: req.Timestamp, EventName: req.EventName, Metadata: req.Metadata, Type: req.Type,
		TransactionID: req.TransactionID})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if rec.Duplicate {
		status = http.StatusOK
	}
	return c.JSON(status, api.PaymentResponse{Success: true, PaymentID: rec.Payment.ID, Duplicate: rec.Duplicate})
}

// webhook reads the raw body (signatures are over the exact bytes) and
// hands it to the revenue service with the provider and site.
func (s *Server) webhook(c echo.Context) error {
	if err := s.refuseFailing(c, failSignature); err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		if _, tooBig := err.(*http.MaxBytesError); tooBig {
			return errs.E(errs.TooLarge, "payload_too_large", "notification larger than %d bytes", maxWebhookBody)
		}
		return errs.E(errs.Invalid, "invalid_request", "could not read the body").Wrap(err)
	}
	// signed deliveries: a site takes a bounded number an hour
	spend := func(site model.SiteID) error {
		return s.checkLimit(c, limitWebhooksName, "webhooks:"+hashed(string(site)), ratelimit.PerHour(s.deps.Limits.WebhooksPerHour), 1)
	}
	sites := sitesWithin{s.deps.SiteLookup, s.siteLookups(c)}
	res, err := s.deps.Revenue.Webhook(c.Request().Context(), sites, c.Param("provider"),
		model.SiteID(c.QueryParam("site_id")), c.Request().Header, body, spend)
	if err != nil {
		return s.countFailure(c, failSignature, err)
	}
	return c.JSON(http.StatusOK, api.WebhookResponse{Received: res.Received, Ignored: res.Ignored, Reason: res.Reason,
		PaymentID: res.PaymentID, Duplicate: res.Duplicate})
}

// sitesWithin finds a webhook's site within its client address's budget of
// lookups (see siteLookups).
type sitesWithin struct {
	sites  WebhookSites
	budget accounts.LookupBudget
}

func (w sitesWithin) Site(ctx context.Context, id model.SiteID) (model.Site, error) {
	return w.sites.SiteWithin(ctx, id, w.budget)
}
