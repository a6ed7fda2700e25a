package goals

import (
	"errors"

	"github.com/tally-analytics/tally/internal/errs"
)

func fieldOf(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
