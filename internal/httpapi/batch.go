package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/pkg/api"
)

// batchBody is api.BatchRequest with each event left raw, so that an event
// of the wrong shape is refused on its own instead of spoiling the batch.
type batchBody struct {
	Events []json.RawMessage `json:"events"`
}

// batch accepts up to ingest.MaxBatch events: 200 with one result per event.
// The batch counts as len(events) requests against the Events API limit.
// When events are refused only for now (the buffer is full, a store is
// down), the answer carries Retry-After; when that leaves no event
// accepted, the batch is answered 503 in the error envelope, to be sent
// again as a whole.
func (s *Server) batch(c echo.Context) error {
	raw, err := readBody(c)
	if err != nil {
		return err
	}
	// The common case decodes in one pass; a batch with an event of the
	// wrong shape is decoded again event by event, to refuse only those.
	var whole api.BatchRequest
	events, decodeErrs, raws := []api.CustomEventRequest(nil), []error(nil), []json.RawMessage(nil)
	if decodeBody(raw, &whole) == nil {
		events = whole.Events
	} else {
		var body batchBody
		if err := decodeBody(raw, &body); err != nil {
			return err
		}
		raws = body.Events
		events, decodeErrs = make([]api.CustomEventRequest, len(body.Events)), make([]error, len(body.Events))
		for i, ev := range body.Events {
			decodeErrs[i] = decodeEvent(ev, &events[i])
		}
	}
	n := len(events)
	if n == 0 || n > ingest.MaxBatch {
		return errs.InvalidField("events", "a batch holds 1 to %d events, not %d", ingest.MaxBatch, n)
	}
	key, lim := s.eventsLimit(c)
	if n > lim.N {
		return errs.InvalidField("events", "a batch of %d events is more than the limit of %d events per hour", n, lim.N)
	}
	if spendsEvents(principal(c)) {
		if err := s.checkLimit(c, limitEventsName, key, lim, n); err != nil {
			return err
		}
	}

	results := make([]api.BatchResult, n)
	ins := make([]ingest.Input, 0, n)
	index := make([]int, 0, n) // index into the batch of each input
	for i, req := range events {
		results[i].Index = i
		if decodeErrs != nil && decodeErrs[i] != nil {
			results[i].Error, _ = s.batchError(i, decodeErrs[i])
			p := principal(c)
			s.deps.Ingest.RefusedRequest(&p, bodySites(raws[i], false), decodeErrs[i])
			continue
		}
		// a pageview keeps its props, as the tracker's do; its revenue is
		// refused, as it is anywhere
		in := pageviewInput(req.PageviewRequest)
		in.Props, in.Revenue = req.Props, revenueInput(req.Revenue)
		if req.EventName != "" {
			in.Pageview, in.EventName = false, req.EventName
		}
		ins = append(ins, in)
		index = append(index, i)
	}
	markIngested(c)       // from here on, refusals are counted event by event
	var unavailable error // why events were refused for now, if any was
	if len(ins) > 0 {
		out, err := s.deps.Ingest.TrackBatch(c.Request().Context(), principal(c), ins)
		if err != nil {
			return err
		}
		var failed error // a server-side failure, logged once for the batch
		for k, r := range out {
			i := index[k]
			if r.Err == nil {
				results[i].Success, results[i].EventID = true, r.EventID
				continue
			}
			status := 0
			results[i].Error, status = s.batchError(i, r.Err)
			if errs.Is(r.Err, errs.Unavailable) {
				unavailable = r.Err
			}
			if status >= 500 && failed == nil {
				failed = r.Err
				s.logFailure(c, status, r.Err)
			}
		}
	}
	resp := api.BatchResponse{Results: results}
	for _, r := range results {
		if r.Success {
			resp.Accepted++
		} else {
			resp.Rejected++
		}
	}
	if unavailable != nil {
		// Nothing accepted: the batch as a whole is to be sent again later.
		if resp.Accepted == 0 {
			return unavailable
		}
		SetRetryAfter(c.Response().Header(), unavailable)
	}
	return c.JSON(http.StatusOK, resp)
}

// decodeEvent decodes one event of a batch like a single event's body.
func decodeEvent(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(raw, err)
	}
	return nil
}

// batchError is the error detail of event i, and its status: what the
// event would have been answered on its own, with its field prefixed by
// events[i]. Server-side failures are described generically (the caller
// logs them).
func (s *Server) batchError(i int, err error) (*api.ErrorDetail, int) {
	status, body := Describe(err)
	d := body.Error
	prefix := "events[" + strconv.Itoa(i) + "]"
	var e *errs.Error
	if d.Field != "" {
		d.Field = prefix + "." + d.Field
	} else if errors.As(err, &e) && e.Kind == errs.Invalid {
		d.Field = prefix
	}
	return &d, status
}
