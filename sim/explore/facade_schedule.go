package explore

import (
	"github.com/locksim/locksim/sim/schedule"
)

// Schedule is schedule.Schedule.
type Schedule = schedule.Schedule

// Deviation is schedule.Deviation.
type Deviation = schedule.Deviation

// Menu is schedule.Menu.
type Menu = schedule.Menu

// PCT is schedule.PCT.
type PCT = schedule.PCT

// Constants of schedule.
const (
	DefaultPCTSteps = schedule.DefaultPCTSteps
)
