package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/revenue"
)

func newRatesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rates", Short: "Manage exchange rates"}
	cmd.AddCommand(newRatesImportCmd())
	return cmd
}

func newRatesImportCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import ECB reference rates (CSV or zip) and convert the payments that waited for them",
		Long: `import reads the European Central Bank's reference-rate file — the daily
(eurofxref.csv) or history (eurofxref-hist.csv) file, or the zip the ECB
serves it in: a header "Date,USD,JPY,..." and rates per 1 EUR, N/A where a
currency had none — stores every rate (replacing those of the same day), and
converts the payments that were waiting for a rate of those days.`,
		Example: `  tally rates import eurofxref-hist.csv`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			file, err := revenue.ParseECB(data)
			if err != nil {
				return err
			}
			rates := file.Rates
			if len(file.Skipped) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "rates: skipped %s: not currencies tally takes payments in (retired, or unknown)\n",
					strings.Join(file.Skipped, ", "))
			}
			pg, err := e.postgres(cmd.Context())
			if err != nil {
				return err
			}
			defer pg.Close()
			started := time.Now()
			const chunk = 2000
			for i := 0; i < len(rates); i += chunk {
				if err := pg.UpsertRates(cmd.Context(), rates[i:min(i+chunk, len(rates))]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "\rrates: %d of %d stored", min(i+chunk, len(rates)), len(rates))
			}
			fmt.Fprintln(cmd.ErrOrStderr())
			converted, err := revenue.NewService(pg, nil, nil, time.Now, e.log).ConvertPending(cmd.Context())
			if err != nil {
				return err
			}
			days := map[time.Time]bool{}
			for _, r := range rates {
				days[r.Day] = true
			}
			skipped := ""
			if len(file.Skipped) > 0 {
				skipped = "; skipped " + strings.Join(file.Skipped, ", ")
			}
			return e.print(asJSON, map[string]any{"rates": len(rates), "days": len(days), "payments_converted": converted,
				"skipped_currencies": append([]string{}, file.Skipped...)},
				fmt.Sprintf("imported %d rates of %d days in %s; converted %d waiting payments%s",
					len(rates), len(days), time.Since(started).Round(time.Millisecond), converted, skipped))
		},
	}
	jsonFlag(cmd, &asJSON)
	return cmd
}
