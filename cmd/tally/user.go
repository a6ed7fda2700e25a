package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/passwords"
	"github.com/tally-analytics/tally/internal/twofactor"
)

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	cmd.AddCommand(newUserCreateCmd(), newUserSetPasswordCmd(), newUser2FADisableCmd())
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
			// DisableByEmail asks no password: nothing to check it with
			u, was, err := twofactor.NewService(pg, nil, time.Now).DisableByEmail(cmd.Context(), email)
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

func newUserSetPasswordCmd() *cobra.Command {
	var email string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "set-password --email E",
		Short: "Set a user's password, ending their sessions and login tokens",
		Long: `Set a user's password, asking nothing else: for a user who forgot theirs on a server that
sends no email (make sure it is them). The password is never a flag, which the shell's history
and the process list would show: at a terminal it is asked for twice, not echoed; otherwise
it is the first line of standard input.

The password follows the rule of every password: 8 to 256 characters. Every dashboard session
and every login token (JWT) of the user ends, and so does a reset link they were sent. Their
API keys keep working, and their two-factor authentication stays as it is (see 2fa-disable).`,
		Example: `  tally user set-password --email ada@example.com
  printf '%s\n' "$NEW_PASSWORD" | tally user set-password --email ada@example.com --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			password, err := readNewPassword(cmd)
			if err != nil {
				return err
			}
			e, err := loadEnv(cmd)
			if err != nil {
				return err
			}
			pg, err := e.postgres(cmd.Context())
			if err != nil {
				return err
			}
			defer pg.Close()
			rdb, err := app.NewRedis(e.cfg)
			if err != nil {
				return err
			}
			defer rdb.Close()
			// Set asks no current password: nothing to check it with
			svc := passwords.NewService(pg, auth.NewPasswords(1), nil, auth.NewRedisRevocations(rdb, e.cfg.RedisPrefix, e.log), time.Now, e.log)
			u, err := svc.Set(cmd.Context(), email, password)
			var fe *errs.Error
			if errors.As(err, &fe) && fe.Field == "password" { // there is no flag to name
				return errors.New("the new password: " + fe.Message)
			}
			if err != nil {
				return err
			}
			return e.print(asJSON, map[string]any{"user_id": string(u.ID)}, fmt.Sprintf("set the password of user %s (%s); "+
				"their sessions and login tokens are ended, their API keys keep working", u.ID, u.Email))
		},
	}
	cmd.Flags().StringVar(&email, "email", "", "the user's email address")
	requireFlags(cmd, "email")
	jsonFlag(cmd, &asJSON)
	return cmd
}

// readNewPassword reads a new password: at a terminal, asked for twice
// without echo; otherwise the first line of standard input.
func readNewPassword(cmd *cobra.Command) (string, error) {
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		line := "-"
		err := fromStdin(cmd, &line)
		return line, err
	}
	ask := func(prompt string) (string, error) {
		fmt.Fprint(cmd.ErrOrStderr(), prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		return string(b), nil
	}
	first, err := ask("New password: ")
	if err != nil {
		return "", err
	}
	again, err := ask("New password, again: ")
	if err != nil {
		return "", err
	}
	if first != again {
		return "", errors.New("the two passwords differ; nothing changed")
	}
	return first, nil
}
