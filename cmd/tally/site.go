package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
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
	var site, provider, secret string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "secret --site SITE_ID --provider provider_a|provider_b|provider_c|provider_d --secret S",
		Short: "Set a site's webhook signing secret for a payment provider",
		Example: `  tally site secret --site SITE_ID --provider provider_a --secret whsec_...
  printf '%s\n' "$STRIPE_WEBHOOK_SECRET" | tally site secret --site SITE_ID --provider provider_a --secret -`,
		Args: cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			if err := fromStdin(cmd, &secret); err != nil {
				return err
			}
			if err := svc.SetProviderSecret(cmd.Context(), model.SiteID(site), model.Provider(provider), secret); err != nil {
				return err
			}
			return e.print(asJSON, map[string]any{"site_id": site, "provider": provider, "updated": true},
				fmt.Sprintf("stored the %s webhook secret of site %s", provider, site))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&site, "site", "", "site id")
	f.StringVar(&provider, "provider", "", "provider_a (Stripe), provider_b (Lemon Squeezy), provider_c (Paddle) or provider_d (Polar)")
	f.StringVar(&secret, "secret", "", "the provider's webhook signing secret; - reads it from the first line of standard input")
	requireFlags(cmd, "site", "provider", "secret")
	jsonFlag(cmd, &asJSON)
	return cmd
}
