// Command tally is the tally analytics server and its admin tool: one binary,
// one subcommand per job. Run `tally --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tally-analytics/tally/internal/errs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tally:", describe(err))
		os.Exit(1)
	}
}

// describe renders an error for a terminal: a validation error names its
// field as the flag to fix.
func describe(err error) string {
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Internal {
		if e.Field != "" {
			return fmt.Sprintf("%s (--%s)", e.Message, flagName(e.Field))
		}
		return e.Message
	}
	return err.Error()
}

// flagName is the command-line flag of a service field name.
func flagName(field string) string {
	switch field {
	case "site_id":
		return "site"
	case "base_currency":
		return "currency"
	case "date_from":
		return "from"
	case "date_to":
		return "to"
	}
	return strings.ReplaceAll(field, "_", "-")
}
