package model

import "time"

// FunnelID identifies a funnel (a UUID string).
type FunnelID string

// FunnelStep is one step of a funnel: a pageview of PagePath (a goal's
// page pattern) or a custom event EventName whose props include every one
// of Props (values as the events store them, as text). Type uses
// the goal types: a step is completed as a goal of that type would be.
type FunnelStep struct {
	Type      GoalType
	PagePath  string
	EventName string
	Props     map[string]string
}

// Funnel is an ordered list of steps a site tracks visitors through: a
// visitor reaches a step after doing every earlier one in order, all within
// Window of their first step.
type Funnel struct {
	ID        FunnelID
	SiteID    SiteID
	Name      string
	Steps     []FunnelStep
	Window    time.Duration
	CreatedAt time.Time
}
