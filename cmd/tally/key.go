package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func newKeyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys"}
	cmd.AddCommand(newKeyCreateCmd(), newKeyRevokeCmd(), newKeyListCmd())
	return cmd
}

func newKeyCreateCmd() *cobra.Command {
	var in accounts.NewKey
	var scopes, expires string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --owner EMAIL --name N [--scopes a,b] [--expires-at RFC3339]",
		Short: "Create an API key (the key is printed once and never again)",
		Long: `create makes an API key acting for its owner. Scopes: stats:read, events:write,
goals:manage, sites:manage, admin:full; without --scopes the key has all of them.
Production servers (TALLY_ENV=production) make and accept sk_live_ keys, others sk_test_ keys.`,
		Example: `  tally key create --owner ada@example.com --name "server ingest" --scopes events:write --json`,
		Args:    cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			for _, s := range strings.Split(scopes, ",") {
				if s = strings.TrimSpace(s); s != "" {
					in.Scopes = append(in.Scopes, model.Scope(s))
				}
			}
			if expires != "" {
				t, err := time.Parse(time.RFC3339, expires)
				if err != nil {
					return errs.InvalidField("expires-at", "must be an RFC 3339 time such as 2027-01-31T00:00:00Z")
				}
				in.ExpiresAt = &t
			}
			k, err := svc.CreateKey(cmd.Context(), in)
			if err != nil {
				return ownerFlag(err)
			}
			return e.print(asJSON, map[string]string{"key_id": string(k.Key.ID), "key": k.Secret},
				fmt.Sprintf("created key %s\n%s\n(store it now: it is not shown again)", k.Key.ID, k.Secret))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&in.OwnerEmail, "owner", "", "email of the user the key acts for")
	f.StringVar(&in.Name, "name", "", "a descriptive name")
	f.StringVar(&scopes, "scopes", "", "comma-separated scopes (default: all)")
	f.StringVar(&expires, "expires-at", "", "expiry time, RFC 3339 (default: never)")
	requireFlags(cmd, "owner", "name")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func newKeyRevokeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key; it fails on the very next request on every server",
		Args:  cobra.ExactArgs(1),
		RunE: withAccounts(func(cmd *cobra.Command, args []string, e *env, svc *accounts.Service) error {
			k, err := svc.RevokeKey(cmd.Context(), model.KeyID(args[0]))
			if err != nil {
				return err
			}
			return e.print(asJSON, map[string]any{"key_id": k.ID, "revoked_at": k.RevokedAt},
				fmt.Sprintf("revoked key %s", k.ID))
		}),
	}
	jsonFlag(cmd, &asJSON)
	return cmd
}

// keyView is a key as listed: never its secret.
type keyView struct {
	KeyID      string     `json:"key_id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func newKeyListCmd() *cobra.Command {
	var owner string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list --owner EMAIL",
		Short: "List a user's API keys (ids, names, scopes, state; never the secrets)",
		Args:  cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			keys, err := svc.ListKeys(cmd.Context(), owner)
			if err != nil {
				return ownerFlag(err)
			}
			views := make([]keyView, 0, len(keys))
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY ID\tNAME\tPREFIX\tSCOPES\tSTATE\tLAST USED")
			for _, k := range keys {
				v := keyView{KeyID: string(k.ID), Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
					ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, LastUsedAt: k.LastUsedAt}
				for _, s := range k.Scopes {
					v.Scopes = append(v.Scopes, string(s))
				}
				views = append(views, v)
				fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, strings.Join(v.Scopes, ","),
					keyState(k, time.Now()), formatTime(k.LastUsedAt))
			}
			tw.Flush()
			return e.print(asJSON, views, b.String())
		}),
	}
	cmd.Flags().StringVar(&owner, "owner", "", "email of the user")
	requireFlags(cmd, "owner")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func keyState(k model.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	default:
		return "active"
	}
}

func formatTime(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
