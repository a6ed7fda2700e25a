package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func newSiteCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "site", Short: "Manage sites"}
	cmd.AddCommand(newSiteCreateCmd(), newSiteSecretCmd())
	return cmd
}

func newSiteCreateCmd() *cobra.Command {
	var in accounts.NewSite
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "create --owner EMAIL --domain D [--timezone TZ] [--currency CUR]",
		Short:   "Create a site owned by a user",
		Example: `  tally site create --owner ada@example.com --domain example.com --timezone Europe/Berlin --currency EUR --json`,
		Args:    cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			site, err := svc.CreateSite(cmd.Context(), in)
			if err != nil {
				return ownerFlag(err)
			}
			return e.print(asJSON, map[string]string{"site_id": string(site.ID)},
				fmt.Sprintf("created site %s (%s, %s, %s)", site.ID, site.Domain, site.Timezone, site.BaseCurrency))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&in.OwnerEmail, "owner", "", "email of the owning user")
	f.StringVar(&in.Domain, "domain", "", "the site's domain, e.g. example.com")
	f.StringVar(&in.Timezone, "timezone", "UTC", "IANA time zone of the site's reports")
	f.StringVar(&in.BaseCurrency, "currency", "USD", "ISO 4217 base currency for revenue")
	requireFlags(cmd, "owner", "domain")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func newSiteSecretCmd() *cobra.Command {
	var site, provider string
	var secrets []string
	var add, asJSON bool
	cmd := &cobra.Command{
		Use:   "secret --site SITE_ID --provider provider_a|provider_b|provider_c|provider_d --secret S [--secret S2 …] [--add]",
		Short: "Set a site's webhook signing secrets for a payment provider",
		Long: `Set a site's webhook signing secrets for a payment provider: up to 3, and a webhook is
accepted if any of them signed it (a test endpoint's secret beside the live one's, or the new
one while a secret is rotated). The secrets given replace those set, unless --add keeps them.`,
		Example: `  tally site secret --site SITE_ID --provider provider_a --secret whsec_live... --secret whsec_test...
  printf '%s\n' "$STRIPE_WEBHOOK_SECRET" | tally site secret --site SITE_ID --provider provider_a --secret - --add`,
		Args: cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			given, err := secretsFromStdin(cmd, secrets)
			if err != nil {
				return err
			}
			n, err := svc.SetProviderSecrets(cmd.Context(), model.SiteID(site), model.Provider(provider), given, add)
			if err != nil {
				return err
			}
			return e.print(asJSON, map[string]any{"site_id": site, "provider": provider, "updated": true, "secrets": n},
				fmt.Sprintf("stored the %s webhook secrets of site %s: %d set", provider, site, n))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&site, "site", "", "site id")
	f.StringVar(&provider, "provider", "", "provider_a (Stripe), provider_b (Lemon Squeezy), provider_c (Paddle) or provider_d (Polar)")
	f.StringArrayVar(&secrets, "secret", nil, "a webhook signing secret of the provider, repeated for several; - reads them from standard input, one a line")
	f.BoolVar(&add, "add", false, "keep the secrets set and add these (default: replace them)")
	requireFlags(cmd, "site", "provider", "secret")
	jsonFlag(cmd, &asJSON)
	return cmd
}

// secretsFromStdin replaces a --secret "-" with the lines of the standard
// input, one secret a line, out of the process list and the shell's history.
func secretsFromStdin(cmd *cobra.Command, secrets []string) ([]string, error) {
	var out []string
	read := false
	for _, s := range secrets {
		if s != "-" {
			out = append(out, s)
			continue
		}
		if read {
			return nil, errs.InvalidField("secret", "standard input (-) can be read once")
		}
		read = true
		b, err := io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		out = append(out, strings.Split(string(b), "\n")...)
	}
	return out, nil
}
