package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/twofactor"
)

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	cmd.AddCommand(newUserCreateCmd(), newUser2FADisableCmd())
	return cmd
}

func newUserCreateCmd() *cobra.Command {
	var in accounts.NewUser
	var plan string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "create --email E --password P --name N [--plan free|pro|enterprise]",
		Short:   "Create a user",
		Example: `  tally user create --email ada@example.com --password 'correct horse' --name Ada --plan pro --json`,
		Args:    cobra.NoArgs,
		RunE: withAccounts(func(cmd *cobra.Command, _ []string, e *env, svc *accounts.Service) error {
			in.Plan = model.Plan(plan)
			if err := fromStdin(cmd, &in.Password); err != nil {
				return err
			}
			u, err := svc.CreateUser(cmd.Context(), in)
			if err != nil {
				return err
			}
			return e.print(asJSON, map[string]string{"user_id": string(u.ID)},
				fmt.Sprintf("created user %s (%s, plan %s)", u.ID, u.Email, u.Plan))
		}),
	}
	f := cmd.Flags()
	f.StringVar(&in.Email, "email", "", "email address (login name)")
	f.StringVar(&in.Password, "password", "", "password, 8 to 256 characters; - reads it from the first line of standard input")
	f.StringVar(&in.Name, "name", "", "display name")
	f.StringVar(&plan, "plan", "free", "plan: free, pro or enterprise (sets the events rate limit)")
	f.IntVar(&in.EventsPerHour, "events-per-hour", 0, "custom events rate limit (enterprise only)")
	requireFlags(cmd, "email", "password", "name")
	jsonFlag(cmd, &asJSON)
	return cmd
}

func newUser2FADisableCmd() *cobra.Command {
	var email string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "2fa-disable --email E",
		Short: "Turn off a user's two-factor authentication",
		Long: `Turn off a user's two-factor authentication, asking nothing else: for a user who lost
both their authenticator and their recovery codes (make sure it is them). Their TOTP secret
and recovery codes are deleted; their password, sessions, tokens and API keys are unchanged,
and they can set two-factor authentication up again from the dashboard's Security page.`,
		Example: `  tally user 2fa-disable --email ada@example.com`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			pg, err := e.postgres(cmd.Context())
			if err != nil {
				return err
			}
			defer pg.Close()
			u, was, err := twofactor.NewService(pg, auth.NewPasswords(1), time.Now).DisableByEmail(cmd.Context(), email)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("turned off two-factor authentication of user %s (%s); its recovery codes are deleted", u.ID, u.Email)
			if !was {
				text = fmt.Sprintf("user %s (%s) had no two-factor authentication on; nothing changed", u.ID, u.Email)
			}
			return e.print(asJSON, map[string]any{"user_id": string(u.ID), "was_enabled": was}, text)
		},
	}
	cmd.Flags().StringVar(&email, "email", "", "the user's email address")
	requireFlags(cmd, "email")
	jsonFlag(cmd, &asJSON)
	return cmd
}
