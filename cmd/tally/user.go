package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
)

func newUserCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	cmd.AddCommand(newUserCreateCmd())
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
